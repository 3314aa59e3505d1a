"""`suite_schema`: the JSON Schema of suite files, checked with a real validator."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import jsonschema
import pytest
import yaml
from suite_kinds import DESIGN_EXAMPLE, Exact, loose

from gradekit import GradeResult, Registry, Sample
from gradekit.suite.schema import suite_schema


def errors(schema: dict[str, Any], text: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [error.message for error in validator.iter_errors(yaml.safe_load(text))]


def test_the_schema_is_a_valid_draft_2020_12_schema(registry):
    schema = suite_schema(registry)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    json.dumps(schema)  # JSON-serialisable as it is


def test_kind_options_come_from_the_attrs_class(registry):
    kinds = suite_schema(registry)["$defs"]["kinds"]
    exact = kinds["exact"]
    assert exact["properties"]["kind"] == {"const": "exact"}
    assert exact["properties"]["ignore_case"] == {
        "type": "boolean",
        "default": False,
        "description": "Compare case-insensitively.",
    }
    assert exact["properties"]["mode"] == {"enum": ["text", "json"], "default": "text"}
    assert exact["additionalProperties"] is False
    assert exact["required"] == ["kind"]
    assert exact["description"] == "Passes when the output equals the expected value."
    near = kinds["near"]
    assert near["properties"]["tolerance"] == {"type": "number"}
    assert near["properties"]["units"] == {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
    }
    assert near["required"] == ["kind", "tolerance"]
    for common in ("name", "weight", "advisory", "threshold", "timeout", "isolation", "enabled"):
        assert common in near["properties"]


def test_plain_function_kinds_accept_any_extra_keys(registry):
    kinds = suite_schema(registry)["$defs"]["kinds"]
    assert kinds["loose"]["additionalProperties"] is True
    assert kinds["loose"]["required"] == ["kind"]


def test_kinds_that_fail_to_load_are_left_out():
    class Broken(Registry):
        def options_class(self, kind: str) -> type | None:
            if kind == "broken":
                raise ImportError("no module named 'missing'")
            return super().options_class(kind)

    broken = Broken(entry_points=False)
    broken.register("exact", Exact)
    broken.register("broken", lambda name, config: None)
    titles = list(suite_schema(broken)["$defs"]["kinds"])
    assert titles == ["exact"]


def test_valid_suite_validates(registry):
    text = """
    name: smoke
    policy: {mode: weighted, threshold: 0.5}
    graders: [{kind: exact, ignore_case: true, weight: 2}, {kind: loose, anything: [1]}]
    cases:
      - name: a
        input: hi
        tags: [smoke, slow]
        labels: [free, metadata]
        graders: [{kind: near, tolerance: 0.1, advisory: true}]
      - name: b
        turns: [{input: x, graders: [{kind: exact, mode: json}]}]
      - name: c
        messages: [{role: user, content: hi}]
    """
    assert errors(suite_schema(registry), textwrap.dedent(text)) == []


@pytest.mark.parametrize(
    "text",
    [
        "cases: [{graders: [{kind: exact, ignore_cse: true}]}]",
        "cases: [{graders: [{kind: exact, mode: xml}]}]",
        "cases: [{graders: [{kind: near}]}]",
        "cases: [{graders: [{kind: nope}]}]",
        "cases: [{graders: [{kind: exact, isolation: fork}]}]",
        "cases: [{tool_calls: [{name: f, args: {}}]}]",
        "cases: []\ngrader: []",
        "cases: []\npolicy: most",
        "name: no-cases",
    ],
)
def test_invalid_suites_do_not_validate(registry, text):
    assert errors(suite_schema(registry), text) != []


def test_the_design_example_validates_with_the_builtin_kinds():
    pytest.importorskip("gradekit.graders.numeric")
    schema = suite_schema()
    assert errors(schema, DESIGN_EXAMPLE) == []
    typo = DESIGN_EXAMPLE.replace("absolute_tolerance", "absolute_tolerence")
    assert errors(schema, typo) != []


def test_composite_children_are_grader_entries():
    @attrs.frozen
    class Every:
        """All children must pass."""

        kind: ClassVar[str] = "every"
        name: str = attrs.field(kw_only=True, default="every")
        graders: list[Mapping[str, Any]] = attrs.field(kw_only=True)

        def grade(self, sample: Sample) -> GradeResult:
            return GradeResult(self.kind, self.name, True, 1.0)

    registry = Registry(entry_points=False)
    registry.register("every", Every)
    registry.register("exact", Exact)
    schema = suite_schema(registry)
    every = schema["$defs"]["kinds"]["every"]
    assert every["properties"]["graders"]["items"] == {"$ref": "#/$defs/grader"}
    assert errors(schema, "cases: [{graders: [{kind: every, graders: [{kind: exact}]}]}]") == []
    bad = "cases: [{graders: [{kind: every, graders: [{kind: exact, typo: 1}]}]}]"
    assert errors(schema, bad) != []


def test_a_function_factory_with_an_options_class_keeps_other_keys_open(registry):
    @attrs.frozen
    class Declared:
        name: str = attrs.field(kw_only=True, default="")
        threshold: float = attrs.field(kw_only=True, default=0.5)

    def factory(name: str, config: Mapping[str, Any]) -> Any:
        return loose(name, config)

    factory.options_class = Declared  # type: ignore[attr-defined]
    registry.register("declared", factory)
    kinds = suite_schema(registry)["$defs"]["kinds"]
    assert kinds["declared"]["additionalProperties"] is True
    assert "threshold" in kinds["declared"]["properties"]


def test_builtin_composites_validate_with_their_children():
    pytest.importorskip("gradekit.run.composite")
    text = """
    cases:
      - graders:
          - kind: weighted
            threshold: 0.5
            graders: [{kind: equality}, {kind: contains, values: [a], weight: 2}]
          - kind: not
            graders: [{kind: equality}]
    """
    assert errors(suite_schema(), textwrap.dedent(text)) == []


def located(schema: dict[str, Any], text: str) -> list[tuple[str, str]]:
    """Every error as (its JSON path, its message)."""
    validator = jsonschema.Draft202012Validator(schema)
    return [
        (error.json_path, error.message) for error in validator.iter_errors(yaml.safe_load(text))
    ]


@pytest.fixture(scope="module")
def builtin_schema() -> dict[str, Any]:
    """The schema of every installed kind, the built-in composites included."""
    pytest.importorskip("gradekit.run.composite")
    return suite_schema()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "cases: [{graders: [{kind: all, graders: [{kind: regex, pattern: a, typo: 1}]}]}]",
            [
                (
                    "$.cases[0].graders[0].graders[0]",
                    "Additional properties are not allowed ('typo' was unexpected)",
                )
            ],
        ),
        (
            "cases: [{graders: [{kind: any, graders: [{kind: not, graders: "
            "[{kind: contains, case_insensitive: yes}]}]}]}]",
            [("$.cases[0].graders[0].graders[0].graders[0]", "'values' is a required property")],
        ),
        (
            "graders: [{kind: weighted, threshold: 0.5, graders: [{kind: equality, weight: -1}]}]"
            "\ncases: []",
            [("$.graders[0].graders[0].weight", "-1 is less than the minimum of 0")],
        ),
        (
            "cases: [{graders: [{kind: at_least, graders: [{kind: equality}]}]}]",
            [("$.cases[0].graders[0]", "'count' is a required property")],
        ),
        (
            "cases: [{graders: [{kind: at_least, count: 0, graders: [{kind: equality}]}]}]",
            [("$.cases[0].graders[0].count", "0 is less than the minimum of 1")],
        ),
        (
            "cases: [{graders: [{kind: weighted, graders: [{kind: equality}]}]}]",
            [("$.cases[0].graders[0]", "'threshold' is a required property")],
        ),
        (
            "cases: [{graders: [{kind: all}]}]",
            [("$.cases[0].graders[0]", "'graders' is a required property")],
        ),
        (
            "cases: [{graders: [{kind: any, graders: []}]}]",
            [("$.cases[0].graders[0].graders", "[] should be non-empty")],
        ),
        (
            "cases: [{graders: [{kind: not, graders: [{kind: equality}, {kind: equality}]}]}]",
            [
                (
                    "$.cases[0].graders[0].graders",
                    "[{'kind': 'equality'}, {'kind': 'equality'}] is too long",
                )
            ],
        ),
        (
            "cases: [{graders: [{kind: all, graders: [{kind: equality}], count: 2}]}]",
            [
                (
                    "$.cases[0].graders[0]",
                    "Additional properties are not allowed ('count' was unexpected)",
                )
            ],
        ),
        (
            "cases: [{graders: [{kind: regex}, {kind: prompt}, {kind: code}]}]",
            [
                ("$.cases[0].graders[0]", "'pattern' is a required property"),
                ("$.cases[0].graders[1]", "'model' is a required property"),
                ("$.cases[0].graders[2]", "'grader' is a required property"),
            ],
        ),
    ],
)
def test_composites_and_required_options_are_checked_at_any_depth(builtin_schema, text, expected):
    assert located(builtin_schema, text) == expected


def test_an_unknown_kind_is_the_one_error_and_names_the_installed_kinds(builtin_schema):
    found = located(
        builtin_schema, "cases: [{graders: [{kind: all, graders: [{kind: contians}]}]}]"
    )
    assert len(found) == 1
    path, message = found[0]
    assert path == "$.cases[0].graders[0].graders[0].kind"
    assert message.startswith("'contians' is not one of ['all', 'any', 'at_least', ")
    for kind in ("code", "contains", "not_contains", "regex", "prompt", "equality"):
        assert f"'{kind}'" in message


def test_every_installed_kind_is_offered_for_kind(builtin_schema):
    from gradekit.registry.registry import default_registry

    kind = builtin_schema["$defs"]["grader"]["properties"]["kind"]
    assert kind["enum"] == list(default_registry.kinds())
    assert len(kind["enumDescriptions"]) == len(kind["enum"])
    labels = [snippet["label"] for snippet in builtin_schema["$defs"]["grader"]["defaultSnippets"]]
    assert labels == kind["enum"]


def test_a_snippet_holds_the_kind_and_its_required_options(builtin_schema):
    snippets = {s["label"]: s for s in builtin_schema["$defs"]["grader"]["defaultSnippets"]}
    assert snippets["contains"]["body"] == {"kind": "contains", "values": []}
    assert snippets["at_least"]["body"] == {"kind": "at_least", "count": "", "graders": []}
    assert snippets["equality"]["body"] == {"kind": "equality"}
    assert snippets["regex"]["description"].startswith("Passes when the pattern is found")


def test_the_builtin_suites_with_composites_still_validate(builtin_schema):
    text = """
    graders:
      - kind: at_least
        count: 1
        graders: [{kind: equality}, {kind: regex, pattern: '\\d+'}]
    cases:
      - input: x
        graders:
          - kind: all
            graders:
              - {kind: not, graders: [{kind: contains, values: [error]}]}
              - {kind: weighted, threshold: 0.5, graders: [{kind: numeric}]}
    """
    assert errors(builtin_schema, textwrap.dedent(text)) == []


def test_descriptions_come_from_help_then_field_docstrings_inherited_too():
    @attrs.frozen
    class Base:
        """A base whose fields carry docstrings."""

        depth: int = attrs.field(kw_only=True, default=1)
        """How deep to look.

        Continued on a second line."""

    @attrs.frozen
    class Documented(Base):
        """Passes when documented."""

        name: str = attrs.field(kw_only=True, default="documented")
        style: str = attrs.field(kw_only=True, default="plain", metadata={"help": "From help."})
        """Not this one: help wins."""
        bare: bool = attrs.field(kw_only=True, default=False)

        def grade(self, sample: Sample) -> GradeResult:
            return GradeResult("documented", self.name, True, 1.0)

    registry = Registry(entry_points=False)
    registry.register("documented", Documented)
    options = suite_schema(registry)["$defs"]["kinds"]["documented"]["properties"]
    assert options["depth"]["description"] == "How deep to look. Continued on a second line."
    assert options["style"]["description"] == "From help."
    assert "description" not in options["bare"]


def test_the_packs_options_carry_descriptions(builtin_schema):
    kinds = builtin_schema["$defs"]["kinds"]
    if "similarity.rouge_l" not in kinds:
        pytest.skip("the gradekit-similarity pack is not installed")
    assert kinds["similarity.rouge_l"]["properties"]["use_stemmer"]["description"]


def test_every_builtin_option_carries_a_description(builtin_schema):
    undescribed = [
        f"{kind}.{key}"
        for kind, schema in builtin_schema["$defs"]["kinds"].items()
        if "." not in kind
        for key, option in schema["properties"].items()
        if key != "kind" and not option.get("description")
    ]
    assert undescribed == []
