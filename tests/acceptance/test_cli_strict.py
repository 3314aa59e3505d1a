"""`gradekit validate` and `run`: a case nothing grades is refused, another framework's keys
are warned about once per suite on stderr, and `--strict` makes those warnings errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cli_support import Run

HOLODECK = """
    name: ported
    cases:
      - name: capital
        input: "Capital of France?"
        ground_truth: "Paris"
        evaluations:
          - {type: equality}
"""


def test_a_case_nothing_grades_is_refused_with_exit_2(
    gradekit: Run, write: Callable[[str, str], Path]
) -> None:
    write("suite.yaml", HOLODECK)
    for command in ("validate", "run"):
        done = gradekit(command, "suite.yaml")
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert done.stderr.splitlines() == [
            "invalid suite file suite.yaml (1 problem)",
            "suite.yaml:3:5: cases[0]: case 'capital' has no grader: no enabled grader applies "
            "to any of its turns, so it would pass without being graded; add `graders:` to the "
            "suite, the case or a turn ('evaluations' is kept as metadata; did you mean "
            "'graders'?)",
        ]


SUITE = """
    graders: [{kind: equality}]
    cases:
      - {name: a, output: "1", expected: "1", ground_truth: "1"}
      - {name: b, output: "2", expected: "2", ground_truth: "2"}
    dataset: data.jsonl
"""


def _suite_with_data(write: Callable[[str, str], Path], tmp_path: Path) -> None:
    write("suite.yaml", SUITE)
    lines = [{"name": f"d{i}", "output": "x", "expected": "x", "response": "x"} for i in range(3)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_warnings_once_per_suite_on_stderr(
    gradekit: Run, write: Callable[[str, str], Path], tmp_path: Path
) -> None:
    _suite_with_data(write, tmp_path)
    expected = [
        "warning: suite.yaml:3:43: case 'a': 'ground_truth' is kept as metadata; did you mean "
        "'expected'? (also in 1 more place)",
        "warning: data.jsonl:1: case 'd0': 'response' is kept as metadata; did you mean 'output'?",
    ]
    done = gradekit("validate", "suite.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == expected
    assert done.stdout == "suite.yaml: valid: suite 'suite', 5 cases\n"
    done = gradekit("run", "suite.yaml", "-o", "r.json")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[:2] == expected
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["passed"] == 5


def test_strict_makes_every_warning_an_error(
    gradekit: Run, write: Callable[[str, str], Path], tmp_path: Path
) -> None:
    _suite_with_data(write, tmp_path)
    done = gradekit("validate", "--strict", "suite.yaml")
    assert done.returncode == 2
    assert "warning" not in done.stderr
    assert done.stderr.splitlines()[1:] == [
        "suite.yaml:3:43: cases[0]: 'ground_truth' is not a gradekit field; did you mean "
        "'expected'? (strict: rename it, or put it under 'metadata:' to keep it as metadata)",
        "suite.yaml:4:43: cases[1]: 'ground_truth' is not a gradekit field; did you mean "
        "'expected'? (strict: rename it, or put it under 'metadata:' to keep it as metadata)",
    ]
    write("suite.yaml", SUITE.replace(', ground_truth: "1"', "").replace(', ground_truth: "2"', ""))
    done = gradekit("validate", "--strict", "suite.yaml")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith(
        "data.jsonl:1: 'response' is not a gradekit field; did you mean 'output'?"
    )
    done = gradekit("run", "--strict", "suite.yaml", "-o", "r.json")
    assert done.returncode == 1  # dataset lines are checked as they stream: errored cases
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert (summary["passed"], summary["errored"]) == (2, 3)
