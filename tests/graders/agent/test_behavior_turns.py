"""`behavior`'s `max_turns` counts turns, numbered from 0 like `Sample.turn` and `ToolCall.turn`.

A turn is one exchange: a user message and everything the agent did in reply. The count is the
number of turns up to and including the one graded: `turn` index + 1, from the tool calls'
recorded `turn` when the trace has one, else from the sample's place in its case.
"""

from __future__ import annotations

from pathlib import Path

import gradekit
from gradekit import Sample, ToolCall

THREE_TURNS = """
graders: [{kind: behavior, max_turns: 2}]
cases:
  - name: chat
    messages:
      - {role: user, content: one}
      - role: assistant
        tool_calls: [{id: a, type: function, function: {name: search, arguments: "{}"}}]
      - {role: tool, tool_call_id: a, content: "1"}
      - {role: assistant, content: "first"}
      - {role: user, content: two}
      - role: assistant
        tool_calls: [{id: b, type: function, function: {name: search, arguments: "{}"}}]
      - {role: tool, tool_call_id: b, content: "2"}
      - {role: user, content: three}
      - role: assistant
        tool_calls: [{id: c, type: function, function: {name: search, arguments: "{}"}}]
      - {role: tool, tool_call_id: c, content: "3"}
      - {role: assistant, content: "third"}
"""


def max_turns_check(result: gradekit.GradeResult) -> tuple[bool, str]:
    assert result.details is not None
    (check,) = [c for c in result.details["checks"] if c["name"] == "max_turns"]
    return check["passed"], check["message"]


def test_a_three_turn_transcript_fails_max_turns_2(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(THREE_TURNS)
    report = gradekit.run_suite(gradekit.load_suite(path))
    (case,) = report.cases
    assert [turn.passed for turn in case.turns] == [True, True, False]
    messages = [max_turns_check(turn.results[0].result)[1] for turn in case.turns]
    assert messages == [
        "1 turn (at most 2)",
        "2 turns (at most 2)",
        "3 turns (at most 2)",
    ]


def test_a_transcript_turn_without_tool_calls_counts_by_its_place(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "graders: [{kind: behavior, max_turns: 1}]\n"
        "cases:\n  - messages: [{role: user, content: a}, {role: user, content: b}]\n"
    )
    (case,) = gradekit.load_suite(path).cases()
    grader = case.turns[0].graders[0].grader
    assert [max_turns_check(grader.grade(t.sample)) for t in case.turns] == [
        (True, "1 turn (at most 1)"),
        (False, "2 turns (at most 1)"),
    ]


def test_a_plain_tool_call_list_counts_the_highest_recorded_turn() -> None:
    grader = gradekit.create("behavior", config={"max_turns": 2})
    calls = [ToolCall("read", turn=0), ToolCall("edit", turn=1), ToolCall("test", turn=2)]
    assert max_turns_check(grader.grade(Sample(tool_calls=calls))) == (
        False,
        "3 turns (at most 2)",
    )
    assert max_turns_check(grader.grade(Sample(tool_calls=calls[:2]))) == (
        True,
        "2 turns (at most 2)",
    )


def test_a_plain_tool_call_list_without_turns_is_one_turn() -> None:
    grader = gradekit.create("behavior", config={"max_turns": 1})
    sample = Sample(tool_calls=[ToolCall("read"), ToolCall("edit")])
    assert max_turns_check(grader.grade(sample)) == (True, "1 turn (at most 1)")


def test_a_turns_case_counts_its_turns_so_far(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "graders: [{kind: behavior, max_turns: 1, scope: case}]\n"
        "cases:\n"
        "  - turns:\n"
        "      - {input: a, tool_calls: [{name: read}]}\n"
        "      - {input: b, tool_calls: [{name: edit}]}\n"
    )
    report = gradekit.run_suite(gradekit.load_suite(path))
    (case,) = report.cases
    assert [max_turns_check(t.results[0].result) for t in case.turns] == [
        (True, "1 turn (at most 1)"),
        (False, "2 turns (at most 1)"),
    ]
