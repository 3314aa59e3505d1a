"""A case that no grader applies to would pass without being graded: it is refused instead.

YAML cases: a load error naming the case and its `file:line:column`. Dataset lines: an errored
case naming `file:line`, unless no case of the suite could ever get a grader (a load error).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradekit import ConfigError
from gradekit.suite.load import load_suite


def problem_lines(path: Path, registry) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    return [str(problem).replace(str(path), "suite.yaml") for problem in caught.value.problems]


def test_a_suite_without_any_grader_is_a_load_error(write, registry):
    path = write(
        """
        cases:
          - name: first
            output: "1"
          - name: second
            output: "2"
        """
    )
    assert problem_lines(path, registry) == [
        "suite.yaml:2:5: cases[0]: case 'first' has no grader: no enabled grader applies to "
        "any of its turns, so it would pass without being graded; add `graders:` to the suite, "
        "the case or a turn",
        "suite.yaml:4:5: cases[1]: case 'second' has no grader: no enabled grader applies to "
        "any of its turns, so it would pass without being graded; add `graders:` to the suite, "
        "the case or a turn",
    ]


def test_another_frameworks_keys_are_named_in_the_error(write, registry):
    # HoloDeck writes its graders under `evaluations:` and the reference under `ground_truth:`.
    path = write(
        """
        cases:
          - name: holodeck
            input: "What is 2+2?"
            ground_truth: "4"
            evaluations:
              - {type: exact}
        """
    )
    (line,) = problem_lines(path, registry)
    assert line.startswith("suite.yaml:2:5: cases[0]: case 'holodeck' has no grader")
    assert line.endswith(
        "the case or a turn ('evaluations' is kept as metadata; did you mean 'graders'?)"
    ), line


def test_disabled_graders_do_not_count(write, registry):
    path = write(
        """
        cases:
          - name: disabled
            output: "1"
            graders: [{kind: exact, enabled: false}]
        """
    )
    (line,) = problem_lines(path, registry)
    assert "case 'disabled' has no grader" in line


def test_one_graded_turn_is_enough(write, registry):
    path = write(
        """
        cases:
          - name: chat
            turns:
              - input: hi
              - input: again
                graders: [{kind: exact}]
        """
    )
    (case,) = load_suite(path, registry=registry).cases()
    assert [len(turn.graders) for turn in case.turns] == [0, 1]


def test_a_dataset_line_without_grader_is_an_errored_case(write, registry, tmp_path):
    lines = [
        {"name": "graded", "output": "1", "graders": [{"kind": "exact"}]},
        {"name": "ungraded", "output": "1", "ground_truth": "1"},
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    path = write("cases: [{name: yaml, graders: [{kind: exact}]}]\ndataset: data.jsonl\n")
    cases = list(load_suite(path, registry=registry).cases())
    assert [(case.name, case.error) for case in cases[:2]] == [("yaml", None), ("graded", None)]
    assert cases[2].error == (
        "data.jsonl:2: case 'ungraded' has no grader: no enabled grader applies to any of its "
        "turns, so it would pass without being graded; add `graders:` to the suite, the case "
        "or a turn"
    )


def test_a_dataset_that_no_grader_could_ever_reach_is_a_load_error(write, registry, tmp_path):
    lines = [{"output": "1", "expected": "1"}, {"output": "2", "expected": "2"}]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    path = write("name: bare\ndataset: data.jsonl\n")
    assert problem_lines(path, registry) == [
        "suite.yaml:2:10: dataset: no grader applies to any case: the suite has no `graders:` "
        "and no line of 'data.jsonl' gives any; add `graders:` to the suite"
    ]


def test_suite_level_graders_grade_every_dataset_line(write, registry, tmp_path):
    (tmp_path / "data.jsonl").write_text(json.dumps({"output": "1"}) + "\n")
    path = write("graders: [{kind: exact}]\ndataset: data.jsonl\n")
    (case,) = load_suite(path, registry=registry).cases()
    assert case.error is None
