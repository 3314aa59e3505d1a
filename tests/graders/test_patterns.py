"""Every option that takes a pattern matched against what an agent produced cannot hang: a
match that backtracks past its time limit is that grader's error result on that sample, naming
the option and the limit, and the run goes on (issue 30: Python's `re` backtracked for an hour
on `^(a+)+$`, holding the GIL, so neither the timeout nor SIGTERM could act)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import gradekit
from gradekit import Sample, ToolCall

# `regex` backtracks on this one (it sees through `(a+)+`): 2**40 ways to split 40 a's.
BACKTRACKS = "^(a|a)*$"
ALMOST = "a" * 40 + "b"


def _limit(option: str) -> str:
    return (
        f"PatternTimeoutError: {option}: the pattern '{BACKTRACKS}' did not finish matching "
        "within 2s of CPU time (it backtracks: nested repeats such as (a+)+ or (a|a)* take "
        "exponential time on a text that almost matches); rewrite it without a repeat inside a "
        "repeat that can match the same text"
    )


def test_a_behavior_argument_matcher_past_its_limit_is_an_error_result() -> None:
    grader = gradekit.create(
        "behavior",
        config={"expected_calls": [{"name": "search", "arguments": {"q": {"regex": BACKTRACKS}}}]},
    )
    sample = Sample(output="", tool_calls=(ToolCall("search", {"q": ALMOST}),))
    started = time.monotonic()
    (result,) = gradekit.grade(sample, [grader])
    assert result.error == _limit("expected_calls[0].arguments.q.regex")
    assert time.monotonic() - started < 30  # 2 s of CPU; the machine may be shared


def test_a_file_contains_pattern_past_its_limit_is_an_error_result(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text(ALMOST, encoding="utf-8")
    grader = gradekit.create("file", config={"contains": {"*.txt": BACKTRACKS}})
    (result,) = gradekit.grade(Sample(workspace=str(tmp_path)), [grader])
    assert result.error == _limit("contains.*.txt")


def test_a_program_output_pattern_past_its_limit_is_an_error_result() -> None:
    command = [sys.executable, "-c", f"print({ALMOST!r})"]
    config = {"command": command, "match": "regex", "expected_output": BACKTRACKS}
    grader = gradekit.create("program", config={**config, "sandbox": "none"})
    (result,) = gradekit.grade(Sample(output=""), [grader])
    assert result.error == _limit("expected_output")


def test_patterns_keep_re_syntax() -> None:
    # Lookarounds, backreferences, named groups, inline flags and possessive repeats: what
    # users write for `re` reads the same (google-re2, linear-time, refuses all of these).
    cases = [
        (r"(?<=\$)\d+(?!\d)", "cost $42", True),
        (r"(?P<word>\w+) (?P=word)", "the the", True),
        (r"(\w)\1", "abc", False),
        (r"(?i)^yes$", "YES", True),
        (r"(?s)a.b", "a\nb", True),
        (r"(?x) \d+ \s cats  # a comment", "3 cats", True),
        (r"a++b", "aaab", True),
    ]
    for pattern, output, passed in cases:
        result = gradekit.create("regex", config={"pattern": pattern}).grade(Sample(output=output))
        assert (pattern, result.passed, result.error) == (pattern, passed, None)


def test_a_glob_with_many_stars_matches_the_agents_file_names_at_once(tmp_path: Path) -> None:
    # Five `*` in one segment against a 255-character name: hours of backtracking in `re`.
    (tmp_path / ("_" * 255)).write_text("x", encoding="utf-8")
    grader = gradekit.create("file", config={"required_files": ["*_*_*_*_*_*.py"]})
    started = time.monotonic()
    (result,) = gradekit.grade(Sample(workspace=str(tmp_path)), [grader])
    assert (result.passed, result.error) == (False, None)
    assert time.monotonic() - started < 10


def test_a_glob_that_cannot_be_compiled_is_a_config_error_naming_its_option() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("file", config={"required_files": ["ok.py", "[z-a].py"]})
    assert str(caught.value.problems[0]) == (
        "$.required_files[1]: invalid glob '[z-a].py': bad character range at position 4"
    )


def test_a_json_schema_pattern_past_its_limit_is_an_error_result() -> None:
    pytest.importorskip("jsonschema")
    schema = {"type": "object", "properties": {"id": {"type": "string", "pattern": BACKTRACKS}}}
    grader = gradekit.create("json", config={"schema": schema})
    (result,) = gradekit.grade(Sample(output=f'{{"id": "{ALMOST}"}}'), [grader])
    assert result.error == _limit("schema")


def test_json_schema_property_patterns_match_the_agents_keys_under_the_limit() -> None:
    pytest.importorskip("jsonschema")
    schema = {"patternProperties": {BACKTRACKS: {"type": "integer"}}}
    grader = gradekit.create("json", config={"schema": schema})
    (result,) = gradekit.grade(Sample(output=f'{{"{ALMOST}": 1}}'), [grader])
    assert result.error == _limit("schema")
    closed = {"properties": {"a": {}}, "patternProperties": {"^x-": {}}}
    grader = gradekit.create("json", config={"schema": {**closed, "additionalProperties": False}})
    ok, extra = (grader.grade(Sample(output=text)) for text in ('{"a": 1, "x-b": 2}', '{"c": 1}'))
    assert (ok.passed, extra.passed) == (True, False)
    assert extra.message == (
        "output does not match the schema at $: 'c' does not match any of the regexes: '^x-'"
    )
