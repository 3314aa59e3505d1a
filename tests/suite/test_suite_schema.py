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
    kinds = {k["title"]: k for k in suite_schema(registry)["$defs"]["grader"]["oneOf"]}
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
    kinds = {k["title"]: k for k in suite_schema(registry)["$defs"]["grader"]["oneOf"]}
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
    titles = [k["title"] for k in suite_schema(broken)["$defs"]["grader"]["oneOf"]]
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
    every = schema["$defs"]["grader"]["oneOf"][0]
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
    kinds = {k["title"]: k for k in suite_schema(registry)["$defs"]["grader"]["oneOf"]}
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
