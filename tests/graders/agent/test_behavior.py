"""The `behavior` kind, created through the real entry point, on real samples."""

from __future__ import annotations

import math
from typing import Any

import pytest

import gradekit
from gradekit import ConfigError, Sample, ToolCall
from gradekit.registry.entries import build_entry


def behavior(**config: Any) -> Any:
    return gradekit.create("behavior", config=config)


def calls(*names: str) -> Sample:
    return Sample(tool_calls=[ToolCall(name) for name in names])


def checks(result: gradekit.GradeResult) -> dict[str, tuple[bool, str]]:
    assert result.details is not None
    return {c["name"]: (c["passed"], c["message"]) for c in result.details["checks"]}


# -- the acceptance cases of issue 6 ---------------------------------------------------------


def test_required_forbidden_and_max_turns_pass_on_read_then_edit() -> None:
    grader = behavior(
        required_tools=["read_file", "edit_file"], forbidden_tools=["rm", "sudo"], max_turns=25
    )
    # Turns are numbered from 0: a read in the first turn, an edit in the second.
    sample = Sample(tool_calls=[ToolCall("read_file", turn=0), ToolCall("edit_file", turn=1)])
    result = grader.grade(sample)
    assert result.outcome == "pass"
    assert result.score == 1.0
    assert checks(result) == {
        "required tool read_file": (True, "called 1 time"),
        "required tool edit_file": (True, "called 1 time"),
        "forbidden tool rm": (True, "not called"),
        "forbidden tool sudo": (True, "not called"),
        "max_turns": (True, "2 turns (at most 25)"),
    }


def test_missing_required_tool_fails_and_is_named_in_details() -> None:
    result = behavior(required_tools=["read_file", "edit_file"]).grade(calls("read_file"))
    assert result.outcome == "fail"
    assert result.score == 0.5
    assert checks(result)["required tool edit_file"] == (False, "never called")
    assert result.message == "1/2 checks passed; failed: required tool edit_file: never called"


def test_every_failed_check_is_named_in_the_message_in_order() -> None:
    grader = behavior(required_tools=["read_file", "edit_file"], forbidden_tools=["rm"])
    result = grader.grade(calls("rm"))
    assert (result.outcome, result.score) == ("fail", 0.0)
    assert result.message == (
        "0/3 checks passed; failed: required tool read_file: never called; "
        "required tool edit_file: never called; forbidden tool rm: called: rm"
    )


def test_order_passes_with_other_calls_between() -> None:
    grader = behavior(order=["read_file", "edit_file", "run_tests"])
    result = grader.grade(calls("read_file", "analyze", "edit_file", "format", "run_tests"))
    assert result.outcome == "pass"
    assert checks(result)["order"] == (
        True,
        "called in order: read_file -> edit_file -> run_tests",
    )


def test_order_fails_on_edit_before_read() -> None:
    grader = behavior(order=["read_file", "edit_file", "run_tests"])
    result = grader.grade(calls("edit_file", "read_file"))
    assert result.outcome == "fail"
    assert checks(result)["order"] == (
        False,
        "'edit_file' not called after 'read_file' (wanted read_file -> edit_file -> run_tests)",
    )


def test_per_tool_max_two_fails_on_three_calls() -> None:
    result = behavior(max_calls={"search": 2}).grade(calls("search", "search", "search"))
    assert result.outcome == "fail"
    assert checks(result) == {"max_calls search": (False, "called 3 times (at most 2)")}


# -- the other rules -------------------------------------------------------------------------


def test_a_bound_equal_to_the_count_passes() -> None:
    grader = behavior(min_calls={"search": 2}, max_calls={"search": 2}, max_tool_calls=3)
    result = grader.grade(calls("search", "search", "calc"))
    assert result.outcome == "pass"


def test_forbidden_globs_are_case_sensitive() -> None:
    grader = behavior(forbidden_tools=["mcp__github__*"])
    failed = grader.grade(calls("read_file", "mcp__github__delete_repo"))
    assert checks(failed)["forbidden tool mcp__github__*"] == (
        False,
        "called: mcp__github__delete_repo",
    )
    assert grader.grade(calls("MCP__GITHUB__delete_repo")).outcome == "pass"


def test_required_glob_matches_any_call() -> None:
    grader = behavior(required_tools=["mcp__search__*"])
    assert grader.grade(calls("mcp__search__web")).outcome == "pass"
    assert grader.grade(calls("mcp_search_web")).outcome == "fail"


def test_max_turns_counts_conversation_turns_without_recorded_turns() -> None:
    grader = behavior(max_turns=2)
    earlier = [Sample(turn=0), Sample(turn=1)]
    third = Sample(turn=2, history=earlier, tool_calls=[ToolCall("x")])
    result = grader.grade(third)
    assert checks(result)["max_turns"] == (False, "3 turns (at most 2)")
    assert grader.grade(Sample(turn=1, history=earlier[:1])).outcome == "pass"


def test_scope_case_includes_earlier_turns_tool_calls() -> None:
    first = Sample(turn=0, tool_calls=[ToolCall("read_file")])
    second = Sample(turn=1, history=[first], tool_calls=[ToolCall("edit_file")])
    config = {"order": ["read_file", "edit_file"], "max_tool_calls": 1}
    assert behavior(**config).grade(second).outcome == "fail"
    case_wide = behavior(scope="case", order=["read_file", "edit_file"], max_tool_calls=2)
    result = case_wide.grade(second)
    assert result.outcome == "pass"
    assert result.details is not None
    assert result.details["tool_calls"] == ["read_file", "edit_file"]


def test_threshold_lets_most_checks_pass() -> None:
    grader = behavior(required_tools=["a", "b", "c", "d"], threshold=0.75)
    result = grader.grade(calls("a", "b", "c"))
    assert (result.outcome, result.score) == ("pass", 0.75)
    assert grader.grade(calls("a", "b")).outcome == "fail"


def test_common_threshold_key_is_routed_to_the_kind() -> None:
    entry = build_entry({"kind": "behavior", "required_tools": ["a", "b"], "threshold": 0.5})
    assert entry is not None
    assert entry.threshold is None
    assert entry.grader.grade(calls("a")).outcome == "pass"


# -- expected_calls --------------------------------------------------------------------------


def expected(arguments: dict[str, Any], actual: dict[str, Any]) -> gradekit.GradeResult:
    grader = behavior(expected_calls=[{"name": "calc", "arguments": arguments}])
    return grader.grade(Sample(tool_calls=[ToolCall("other"), ToolCall("calc", actual)]))


def test_numbers_compare_numerically() -> None:
    assert expected({"x": 206588}, {"x": 206588.0}).outcome == "pass"
    assert expected({"x": 206588.0}, {"x": 206588}).outcome == "pass"
    assert expected({"x": 206588}, {"x": "206588"}).outcome == "fail"


def test_booleans_compare_strictly() -> None:
    assert expected({"flag": True}, {"flag": True}).outcome == "pass"
    assert expected({"flag": True}, {"flag": 1}).outcome == "fail"
    assert expected({"n": 1}, {"n": True}).outcome == "fail"


def test_lists_and_maps_compare_deeply() -> None:
    wanted = {"rows": [1, {"a": [True, "x"]}]}
    assert expected(wanted, {"rows": [1.0, {"a": [True, "x"]}]}).outcome == "pass"
    result = expected(wanted, {"rows": [1, {"a": [True, "y"]}]})
    assert checks(result)["expected call calc"] == (
        False,
        "none of 1 call(s) to 'calc' matched; first: argument 'rows': [1]: a: [1]: "
        "expected 'x', got 'y'",
    )
    assert expected({"m": {"a": 1}}, {"m": {"a": 1, "b": 2}}).outcome == "fail"


def test_unlisted_arguments_are_ignored() -> None:
    assert expected({"x": 1}, {"x": 1, "precision": 4}).outcome == "pass"


def test_regex_is_a_full_match() -> None:
    assert expected({"q": {"regex": "rev.*2023"}}, {"q": "revenue 2023"}).outcome == "pass"
    assert expected({"q": {"regex": "rev"}}, {"q": "revenue"}).outcome == "fail"


@pytest.mark.parametrize("value", [math.nan, "nan", math.inf])
def test_a_numeric_matcher_refuses_an_argument_that_is_not_a_finite_number(value: Any) -> None:
    # NaN is within no tolerance of anything: `abs(nan - 5) > 0` is False, so it matched.
    grader = behavior(expected_calls=[{"name": "calc", "arguments": {"b": {"numeric": 5}}}])
    result = grader.grade(Sample(tool_calls=[ToolCall("calc", {"b": value})]))
    assert result.outcome == "fail"
    assert "expected 5 ± 0" in result.message


def test_contains_and_numeric_tolerance() -> None:
    assert expected({"q": {"contains": "2023"}}, {"q": "revenue 2023"}).outcome == "pass"
    assert expected({"q": {"contains": "2024"}}, {"q": "revenue 2023"}).outcome == "fail"
    tolerant = {"x": {"numeric": 0.1414, "tolerance": 0.001}}
    assert expected(tolerant, {"x": 0.14136}).outcome == "pass"
    assert expected(tolerant, {"x": "0.14136"}).outcome == "pass"
    assert expected(tolerant, {"x": 0.15}).outcome == "fail"


def test_missing_argument_and_missing_call_are_reported() -> None:
    result = expected({"x": 1}, {"y": 1})
    assert checks(result)["expected call calc"] == (
        False,
        "none of 1 call(s) to 'calc' matched; first: argument 'x' missing",
    )
    grader = behavior(expected_calls=[{"name": "search"}])
    assert checks(grader.grade(calls("calc")))["expected call search"] == (
        False,
        "'search' never called",
    )


# -- configuration errors --------------------------------------------------------------------


def test_no_constraint_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        behavior()
    assert str(caught.value) == (
        "invalid options for kind 'behavior'\n"
        "a behavior grader with no constraint checks nothing; set at least one of "
        "required_tools, forbidden_tools, max_turns, max_tool_calls, min_calls, max_calls, "
        "order, expected_calls"
    )
    with pytest.raises(ConfigError):
        behavior(required_tools=[], scope="case")


def test_invalid_regex_is_a_config_error_at_creation() -> None:
    with pytest.raises(ConfigError) as caught:
        behavior(expected_calls=[{"name": "calc", "arguments": {"q": {"regex": "(unclosed"}}}])
    assert str(caught.value) == (
        "invalid options for kind 'behavior'\n"
        "$.expected_calls[0].arguments.q.regex: invalid regular expression: "
        "missing ) at position 9"
    )


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"max_turns": -1}, "$.max_turns: must be >= 0, got -1"),
        ({"max_calls": {"a": "two"}}, "$.max_calls.a: expected a whole number, got 'two'"),
        ({"required_tools": "read_file"}, "$.required_tools: expected a list, got 'read_file'"),
        ({"order": ["a"], "scope": "all"}, "$.scope: expected one of 'turn', 'case', got 'all'"),
        (
            {"expected_calls": [{"tool": "x"}]},
            "$.expected_calls[0]: unknown key 'tool'; an expected call takes name, arguments, "
            "extra_arguments, strings, numbers",
        ),
        (
            {"expected_calls": [{"name": "x", "arguments": {"n": {"numeric": "a"}}}]},
            "$.expected_calls[0].arguments.n.numeric: expected a number, got 'a'",
        ),
        (
            {"order": ["a"], "forbiden_tools": ["rm"]},
            "$.forbiden_tools: unknown option 'forbiden_tools' for kind 'behavior' "
            "(did you mean 'forbidden_tools'?)",
        ),
    ],
)
def test_bad_options_name_the_key(config: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        behavior(**config)
    assert [str(p) for p in caught.value.problems] == [problem]


def test_result_details_are_json_safe() -> None:
    import json

    result = behavior(required_tools=["a"]).grade(calls("a"))
    json.dumps(result.details)


def test_a_tool_name_that_is_not_text_is_an_error_naming_the_call() -> None:
    # Its details list the names, and the batch runner trusts them to be JSON.
    sample = Sample(tool_calls=[ToolCall("search"), ToolCall(object())])  # type: ignore[arg-type]
    result = behavior(required_tools=["search"]).grade(sample)
    assert result.outcome == "error"
    assert result.message.startswith("tool call #2 has a name that is not text (object <")
    assert result.message.endswith("give each tool call its tool's name as text")
    assert result.details is None


def test_turn_values_that_are_not_numbers_are_ignored() -> None:
    sample = Sample(tool_calls=[ToolCall("a", turn="9"), ToolCall("b", turn=0)])  # type: ignore[arg-type]
    result = behavior(max_turns=1).grade(sample)
    assert checks(result)["max_turns"] == (True, "1 turn (at most 1)")
