"""`behavior`'s `expected_calls` options (`one_of`, `optional`, `extra_arguments`, `strings`,
`numbers`, `expected_calls_match`), and the tool names every option refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gradekit
from gradekit import ConfigError, Sample, ToolCall


def behavior(**config: Any) -> Any:
    return gradekit.create("behavior", config=config)


def grade(call: dict[str, Any], *made: ToolCall, **options: Any) -> gradekit.GradeResult:
    grader = behavior(expected_calls=[call], **options)
    return grader.grade(Sample(tool_calls=made))


def checks(result: gradekit.GradeResult) -> list[tuple[str, bool, str]]:
    assert result.details is not None
    return [(c["name"], c["passed"], c["message"]) for c in result.details["checks"]]


AREA = {
    "name": "calculate_area",
    "arguments": {
        "base": {"one_of": [10, 10.0]},
        "unit": {"one_of": ["cm", "centimeters"], "optional": True},
    },
}


@pytest.mark.parametrize(
    ("arguments", "passes"),
    [
        ({"base": 10, "unit": "cm"}, True),
        ({"base": 10.0, "unit": "centimeters"}, True),
        ({"base": 10}, True),  # unit may be absent
        ({"unit": "cm"}, False),  # base may not
        ({"base": 10, "unit": "mm"}, False),
        ({"base": 10, "unit": "CM"}, False),  # strings: exact by default
        ({"base": 10, "unit": "cm", "precision": 2}, True),  # extra_arguments: allow
    ],
)
def test_one_of_and_optional(arguments: dict[str, Any], passes: bool) -> None:
    assert grade(AREA, ToolCall("calculate_area", arguments)).passed is passes


def test_a_value_outside_one_of_is_named_with_the_choices() -> None:
    result = grade(AREA, ToolCall("calculate_area", {"base": 12}))
    assert checks(result) == [
        (
            "expected call calculate_area",
            False,
            "none of 1 call(s) to 'calculate_area' matched; first: argument 'base': "
            "expected one of [10, 10.0], got 12",
        )
    ]


def test_extra_arguments_forbid_fails_an_unlisted_argument() -> None:
    strict = {**AREA, "extra_arguments": "forbid"}
    assert grade(strict, ToolCall("calculate_area", {"base": 10, "unit": "cm"})).passed
    result = grade(strict, ToolCall("calculate_area", {"base": 10, "precision": 2}))
    assert checks(result)[0][2] == (
        "none of 1 call(s) to 'calculate_area' matched; first: argument 'precision' not "
        "expected (extra_arguments: forbid)"
    )


@pytest.mark.parametrize(
    ("given", "passes"),
    [
        ("New York, NY", True),
        ("new york ny", True),
        ("NEW-YORK,NY.", True),
        ("new_york*ny^", True),
        ("New  York,\tNY", False),  # a tab is not one of the characters ignored
        ("Newark, NJ", False),
    ],
)
def test_loose_strings_ignore_case_spaces_and_punctuation(given: str, passes: bool) -> None:
    call = {"name": "trains", "arguments": {"city": "New York, NY"}, "strings": "loose"}
    assert grade(call, ToolCall("trains", {"city": given})).passed is passes


def test_loose_strings_reach_into_lists_maps_and_one_of() -> None:
    call = {
        "name": "book",
        "arguments": {
            "cities": ["Paris", "Rome"],
            "stay": {"hotel": {"one_of": ["Ritz", "Savoy"]}},
        },
        "strings": "loose",
    }
    made = ToolCall("book", {"cities": ["paris", "ROME"], "stay": {"hotel": "the-savoy"}})
    assert not grade(call, made).passed  # "thesavoy" is not "savoy"
    made = ToolCall("book", {"cities": ["paris", "ROME"], "stay": {"hotel": "SAVOY"}})
    assert grade(call, made).passed


def test_typed_numbers_take_an_int_for_a_float_never_a_float_for_an_int() -> None:
    call = {"name": "f", "arguments": {"n": 5, "x": 2.0}, "numbers": "typed"}
    assert grade(call, ToolCall("f", {"n": 5, "x": 2})).passed
    assert not grade(call, ToolCall("f", {"n": 5.0, "x": 2.0})).passed
    assert not grade(call, ToolCall("f", {"n": True, "x": 2.0})).passed
    plain = {"name": "f", "arguments": {"n": 5, "x": 2.0}}  # numbers: value, the default
    assert grade(plain, ToolCall("f", {"n": 5.0, "x": 2})).passed


def test_optional_keys_of_a_map() -> None:
    call = {"name": "f", "arguments": {"m": {"a": 1, "b": {"one_of": [2], "optional": True}}}}
    assert grade(call, ToolCall("f", {"m": {"a": 1}})).passed
    assert grade(call, ToolCall("f", {"m": {"a": 1, "b": 2}})).passed
    assert not grade(call, ToolCall("f", {"m": {"a": 1, "b": 3}})).passed
    assert not grade(call, ToolCall("f", {"m": {"a": 1, "c": 2}})).passed
    assert not grade(call, ToolCall("f", {"m": {"b": 2}})).passed


# -- expected_calls_match ----------------------------------------------------------------------

SEARCHES = [
    {"name": "search", "arguments": {"q": "a"}},
    {"name": "search", "arguments": {"q": "b"}},
]


def test_each_is_the_default_and_lets_one_call_match_twice() -> None:
    grader = behavior(expected_calls=[SEARCHES[0], SEARCHES[0]])
    result = grader.grade(Sample(tool_calls=[ToolCall("search", {"q": "a"}), ToolCall("x")]))
    assert result.passed


@pytest.mark.parametrize(
    ("queries", "any_order", "in_order"),
    [
        (["a", "b"], True, True),
        (["b", "a"], True, False),
        (["a"], False, False),
        (["a", "a"], False, False),
        (["a", "b", "c"], False, False),
    ],
)
def test_any_order_and_in_order_take_the_expected_calls_one_each(
    queries: list[str], any_order: bool, in_order: bool
) -> None:
    made = Sample(tool_calls=[ToolCall("search", {"q": q}) for q in queries])
    for mode, passes in (("any_order", any_order), ("in_order", in_order)):
        grader = behavior(expected_calls=SEARCHES, expected_calls_match=mode)
        assert grader.grade(made).passed is passes, mode


def test_any_order_finds_a_one_to_one_match_when_one_exists() -> None:
    # The first expected call accepts either query; taken greedily by the first call ("b"),
    # the second expected call ("b" only) would be left with none.
    either = {"name": "search", "arguments": {"q": {"one_of": ["a", "b"]}}}
    grader = behavior(
        expected_calls=[either, {"name": "search", "arguments": {"q": "b"}}],
        expected_calls_match="any_order",
    )
    made = Sample(tool_calls=[ToolCall("search", {"q": "b"}), ToolCall("search", {"q": "a"})])
    assert checks(grader.grade(made)) == [
        ("expected_calls count", True, "2 tool calls (expected exactly 2)"),
        ("expected call search #1", True, "matched tool call #2"),
        ("expected call search #2", True, "matched tool call #1"),
    ]


def test_in_order_names_the_call_out_of_place() -> None:
    grader = behavior(
        expected_calls=[{"name": "read"}, {"name": "edit"}], expected_calls_match="in_order"
    )
    result = grader.grade(Sample(tool_calls=[ToolCall("edit"), ToolCall("read")]))
    assert result.score == pytest.approx(1 / 3)
    assert checks(result) == [
        ("expected_calls count", True, "2 tool calls (expected exactly 2)"),
        ("expected call read", False, "tool call #1: 'edit' called instead"),
        ("expected call edit", False, "tool call #2: 'read' called instead"),
    ]


# -- configuration errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (
            {"expected_calls": [{"name": "f", "arguments": {"x": {"one_of": []}}}]},
            "$.expected_calls[0].arguments.x.one_of: expected a non-empty list of values, got []",
        ),
        (
            {"expected_calls": [{"name": "f", "arguments": {"x": {"one_of": [1], "optional": 1}}}]},
            "$.expected_calls[0].arguments.x.optional: expected true or false, got 1",
        ),
        (
            {
                "expected_calls": [
                    {"name": "f", "arguments": {"x": [{"one_of": [1], "optional": True}]}}
                ]
            },
            "$.expected_calls[0].arguments.x[0].optional: optional applies to an argument or a "
            "key of a map, not to a list's item or a one_of value; remove it",
        ),
        (
            {"expected_calls": [{"name": "f", "strings": "fuzzy"}]},
            "$.expected_calls[0].strings: expected exact or loose, got 'fuzzy'",
        ),
        (
            {"expected_calls": [{"name": "f", "extra_arguments": "deny"}]},
            "$.expected_calls[0].extra_arguments: expected allow or forbid, got 'deny'",
        ),
        (
            {"required_tools": ["a"], "expected_calls_match": "any_order"},
            "$.expected_calls_match: says how expected_calls are matched, and there are none; "
            "add expected_calls",
        ),
        (
            {"expected_calls": [{"name": "f"}], "expected_calls_match": "all"},
            "$.expected_calls_match: expected one of 'each', 'any_order', 'in_order', got 'all'",
        ),
    ],
)
def test_bad_expected_call_options_name_the_key(config: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        behavior(**config)
    assert [str(p) for p in caught.value.problems] == [problem]


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize(
    ("option", "where"),
    [
        ("required_tools", "required_tools[1]"),
        ("forbidden_tools", "forbidden_tools[1]"),
        ("order", "order[1]"),
        ("min_calls", "min_calls"),
        ("max_calls", "max_calls"),
        ("expected_calls", "expected_calls[1].name"),
    ],
)
def test_an_empty_or_blank_tool_name_is_refused_in_every_option(
    name: str, option: str, where: str
) -> None:
    # A forbidden "" matches no call: the check could never fail.
    values: dict[str, Any] = {
        "required_tools": ["search", name],
        "forbidden_tools": ["rm", name],
        "order": ["read", name],
        "min_calls": {"search": 1, name: 1},
        "max_calls": {"search": 1, name: 1},
        "expected_calls": [{"name": "search"}, {"name": name}],
    }
    with pytest.raises(ConfigError) as caught:
        behavior(**{option: values[option]})
    message = f"a tool name cannot be empty or blank, got {name!r}; write the tool's name"
    if option == "expected_calls":
        message = "each expected call needs the tool's name: " + message
    assert [str(p) for p in caught.value.problems] == [f"$.{where}: {message}"]


def test_an_empty_tool_name_is_refused_at_suite_load_with_its_place(tmp_path: Path) -> None:
    # The line is the grader entry's (as for every option error), the path names the item.
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "cases:\n"
        "  - name: c\n"
        "    output: x\n"
        "    graders:\n"
        "      - kind: behavior\n"
        "        forbidden_tools: ['']\n"
    )
    with pytest.raises(ConfigError) as caught:
        gradekit.load_suite(suite)
    assert [str(p) for p in caught.value.problems] == [
        f"{suite}:5:9: cases[0].graders[0].forbidden_tools[0]: a tool name cannot be empty or "
        "blank, got ''; write the tool's name"
    ]


# -- a matcher written wrong -------------------------------------------------------------------

MISSPELT = """\
cases:
  - name: c
    output: x
    tool_calls: [{name: search, arguments: {q: "revenue 2023"}}]
    graders:
      - kind: behavior
        expected_calls:
          - name: search
            arguments:
              q: {regx: "rev.*"}
"""


def test_a_misspelt_matcher_is_warned_about_at_its_line(tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(MISSPELT)
    suite = gradekit.load_suite(suite_file)
    assert list(suite.warnings) == [
        f"{suite_file}:10:15: expected_calls[0].arguments.q: {{regx}} is no matcher, so it is "
        "compared as a literal map and matches only that very map ('regx': did you mean "
        "'regex'?); a matcher is one of {regex}, {contains}, {numeric, tolerance}, {one_of}, "
        "each with an optional 'optional'"
    ]
    with pytest.raises(ConfigError) as caught:
        gradekit.load_suite(suite_file, strict=True)
    assert [str(p) for p in caught.value.problems] == [
        f"{suite_file}:10:18: cases[0].graders[0].expected_calls[0].arguments.q: {{regx}} is "
        "no matcher, so it is compared as a literal map and matches only that very map "
        "('regx': did you mean 'regex'?); a matcher is one of {regex}, {contains}, "
        "{numeric, tolerance}, {one_of}, each with an optional 'optional'"
    ]


@pytest.mark.parametrize(
    "value",
    [
        {"regx": "rev.*"},
        {"numeric": 5, "tolerence": 0.1},
        {"one_off": ["a"]},
        {"regex": "a", "contains": "b"},
        {"one_of": ["a"], "optinal": True},
        {"fuzzy": "new york"},  # HoloDeck's
    ],
)
def test_maps_that_look_like_a_matcher_warn(value: dict[str, Any]) -> None:
    from gradekit.core.errors import OptionWarning

    with pytest.warns(OptionWarning, match=r"^expected_calls\[0\]\.arguments\.q: \{"):
        behavior(expected_calls=[{"name": "f", "arguments": {"q": value}}])


@pytest.mark.parametrize(
    "value", [{"city": "Paris"}, {"regex": "a"}, {"name": "x", "contains": "y"}, {}]
)
def test_matchers_and_plain_maps_do_not_warn(value: dict[str, Any]) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        behavior(expected_calls=[{"name": "f", "arguments": {"q": value}}])
