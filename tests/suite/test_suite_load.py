"""Loading valid suites: case shapes, grader levels, policies, metadata, workspaces."""

from __future__ import annotations

from pathlib import Path

import pytest

import gradekit
from gradekit import ToolCall
from gradekit.suite.load import load_suite
from gradekit.suite.model import Policy


def grader_names(turn: gradekit.suite.model.Turn) -> list[str]:
    return [entry.name for entry in turn.graders]


def test_single_turn_case_takes_its_fields_from_the_case(write, registry):
    path = write(
        """
        cases:
          - name: growth
            input: What was the growth rate?
            output: "14.14%"
            expected: 0.14136
            tool_calls: [{name: calculator, arguments: {expr: a/b}, result: 0.14136}]
            context: [revenue grew]
            graders: [{kind: exact}]
        """
    )
    suite = load_suite(path, registry=registry)
    (case,) = list(suite.cases())
    (turn,) = case.turns
    sample = turn.sample
    assert case.name == "growth"
    assert (sample.case, sample.turn) == ("growth", 0)
    assert sample.input == "What was the growth rate?"
    assert sample.output == "14.14%"
    assert sample.expected == 0.14136
    assert sample.tool_calls == (ToolCall("calculator", {"expr": "a/b"}, 0.14136),)
    assert sample.context == ("revenue grew",)
    assert sample.history == ()
    assert sample.metadata == {}
    assert grader_names(turn) == ["exact"]
    assert case.location == f"{path}:2:5"


def test_suite_defaults(write, registry):
    path = write("cases: [{input: a, graders: [{kind: exact}]}]\n", "my-smoke.yaml")
    suite = load_suite(path, registry=registry)
    assert suite.name == "my-smoke"
    assert suite.policy == Policy("all")
    assert suite.timeout == 60.0
    assert suite.graders == ()
    assert suite.path == str(path)
    assert suite.case_count == 1
    assert [case.name for case in suite.cases()] == ["case-0"]


def test_top_level_keys(write, registry):
    path = write(
        """
        name: convfinqa
        description: smoke test
        timeout: 2.5
        policy: any
        graders: [{kind: exact}]
        cases: [{name: a}, {name: b}]
        """
    )
    suite = load_suite(str(path), registry=registry)
    assert (suite.name, suite.timeout, suite.policy) == ("convfinqa", 2.5, Policy("any"))
    assert [entry.kind for entry in suite.graders] == ["exact"]
    assert suite.graders[0].location == f"{path}:5:11"
    assert [case.name for case in suite.cases()] == ["a", "b"]


def test_three_grader_levels_in_order(write, registry):
    path = write(
        """
        graders: [{kind: exact, name: suite-level}]
        cases:
          - name: chat
            graders: [{kind: exact, name: case-level}]
            turns:
              - input: hi
                graders: [{kind: exact, name: turn-level}]
              - input: again
          - name: plain
            graders: [{kind: loose, name: case-only}]
        """
    )
    chat, plain = load_suite(path, registry=registry).cases()
    assert grader_names(chat.turns[0]) == ["suite-level", "case-level", "turn-level"]
    assert grader_names(chat.turns[1]) == ["suite-level", "case-level"]
    assert grader_names(plain.turns[0]) == ["suite-level", "case-only"]
    # The same suite entry object is shared by every turn, never created per turn.
    assert chat.turns[0].graders[0] is plain.turns[0].graders[0]


def test_disabled_graders_are_left_out(write, registry):
    path = write(
        """
        graders: [{kind: exact, enabled: false}, {kind: loose}]
        cases: [{input: a}]
        """
    )
    suite = load_suite(path, registry=registry)
    (case,) = suite.cases()
    assert grader_names(case.turns[0]) == ["loose"]


def test_common_keys_reach_the_entry(write, registry):
    path = write(
        """
        graders:
          - {kind: exact, name: strict, weight: 2, advisory: true, threshold: 0.5,
             timeout: 3, isolation: process, fail_on_error: true, ignore_case: true}
        cases: [{input: a}]
        """
    )
    (entry,) = load_suite(path, registry=registry).graders
    assert (entry.name, entry.weight, entry.advisory, entry.threshold) == ("strict", 2, True, 0.5)
    assert (entry.timeout, entry.isolation, entry.fail_on_error) == (3.0, "process", True)
    assert entry.grader.ignore_case is True


def test_multi_turn_history_and_indexes(write, registry):
    path = write(
        """
        graders: [{kind: exact}]
        cases:
          - name: talk
            turns:
              - {input: one, output: "1"}
              - {input: two, output: "2"}
              - {input: three, output: "3"}
        """
    )
    (case,) = load_suite(path, registry=registry).cases()
    samples = [turn.sample for turn in case.turns]
    assert [s.turn for s in samples] == [0, 1, 2]
    assert {s.case for s in samples} == {"talk"}
    assert samples[2].history == (samples[0], samples[1])
    assert samples[1].history == (samples[0],)


def test_metadata_from_extra_keys_turn_wins(write, registry):
    path = write(
        """
        graders: [{kind: exact}]
        cases:
          - name: tagged
            difficulty: hard
            source: finqa
            metadata: {split: test}
            turns:
              - input: a
                difficulty: easy
                metadata: {note: first}
              - input: b
        """
    )
    (case,) = load_suite(path, registry=registry).cases()
    first, second = (turn.sample.metadata for turn in case.turns)
    assert first == {"difficulty": "easy", "source": "finqa", "split": "test", "note": "first"}
    assert second == {"difficulty": "hard", "source": "finqa", "split": "test"}


def test_case_level_expected_context_workspace_are_defaults_for_turns(write, registry, tmp_path):
    (tmp_path / "ws" / "a").mkdir(parents=True)
    (tmp_path / "ws" / "b").mkdir()
    path = write(
        """
        graders: [{kind: exact}]
        cases:
          - name: build
            expected: ok
            context: shared
            workspace: ws/a
            turns:
              - input: first
              - input: second
                expected: other
                workspace: ws/b
        """
    )
    (case,) = load_suite(path, registry=registry).cases()
    first, second = (turn.sample for turn in case.turns)
    assert (first.expected, first.context, first.workspace) == (
        "ok",
        ("shared",),
        str(tmp_path / "ws" / "a"),
    )
    assert (second.expected, second.workspace) == ("other", str(tmp_path / "ws" / "b"))


def test_workspace_is_relative_to_the_suite_file_not_the_cwd(
    write, registry, tmp_path, monkeypatch
):
    (tmp_path / "suites" / "out").mkdir(parents=True)
    path = write("graders: [{kind: exact}]\ncases: [{workspace: out}]\n", "suites/suite.yaml")
    monkeypatch.chdir(tmp_path)
    (case,) = load_suite(Path("suites/suite.yaml"), registry=registry).cases()
    assert case.turns[0].sample.workspace == str(tmp_path / "suites" / "out")
    assert Path(case.turns[0].sample.workspace).is_absolute()
    assert path.exists()


@pytest.mark.parametrize(
    ("suite_keys", "case_keys", "expected"),
    [
        ("policy: any", "", (Policy("any"), None)),
        ("policy: weighted\nthreshold: 0.8", "", (Policy("weighted", 0.8), None)),
        ("policy: {mode: weighted, threshold: 0.7}", "", (Policy("weighted", 0.7), None)),
        ("policy: any", ", policy: all", (Policy("any"), Policy("all"))),
        ("", ", policy: weighted, threshold: 0.25", (Policy("all"), Policy("weighted", 0.25))),
        ("", ", policy: {mode: any}", (Policy("all"), Policy("any"))),
    ],
)
def test_policy_at_suite_and_case_level(write, registry, suite_keys, case_keys, expected):
    path = write(f"{suite_keys}\ngraders: [{{kind: exact}}]\ncases:\n  - {{name: c{case_keys}}}\n")
    suite = load_suite(path, registry=registry)
    (case,) = suite.cases()
    assert (suite.policy, case.policy) == expected


def test_cases_returns_a_fresh_iterator_each_time(write, registry):
    path = write("graders: [{kind: exact}]\ncases: [{name: a}, {name: b}]\n")
    suite = load_suite(path, registry=registry)
    assert [c.name for c in suite.cases()] == ["a", "b"]
    assert [c.name for c in suite.cases()] == ["a", "b"]


def test_samples_are_immutable(write, registry):
    path = write("graders: [{kind: exact}]\ncases: [{input: {a: [1, 2]}, labels: [x]}]\n")
    (case,) = load_suite(path, registry=registry).cases()
    sample = case.turns[0].sample
    with pytest.raises(TypeError):
        sample.input["a"] = 3
    assert sample.metadata["labels"] == ("x",)


def test_yaml_anchors_and_merge_keys_work(write, registry):
    path = write(
        """
        graders:
          - &strict {kind: exact, ignore_case: true, name: one}
          - {<<: *strict, name: two}
        cases: [{input: a}]
        """
    )
    one, two = load_suite(path, registry=registry).graders
    assert (one.name, two.name, two.grader.ignore_case) == ("one", "two", True)


def test_the_public_name_is_the_loader():
    assert gradekit.load_suite is load_suite
