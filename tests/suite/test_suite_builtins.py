"""The suite loader with gradekit's own kinds, found through its entry points."""

from __future__ import annotations

import pytest
from suite_kinds import DESIGN_EXAMPLE

from gradekit import ConfigError
from gradekit.suite.load import load_suite

pytest.importorskip("gradekit.graders.numeric")
pytest.importorskip("gradekit.graders.user_code")


def test_design_example_loads_with_a_code_grader_beside_the_suite(write, tmp_path):
    (tmp_path / "design_example_benchmarks.py").write_text(
        "def numeric_equal(ctx):\n    return True\n", encoding="utf-8"
    )
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "agent-outputs.jsonl").write_text(
        '{"name": "line", "output": "1", "expected": 1}\n', encoding="utf-8"
    )
    path = write(DESIGN_EXAMPLE.replace("my_benchmarks:", "design_example_benchmarks:"))
    suite = load_suite(path)
    growth, line = suite.cases()
    assert [e.kind for e in growth.turns[0].graders] == ["numeric", "code"]
    assert growth.turns[0].graders[0].grader.grade(growth.turns[0].sample).passed
    assert line.name == "line" and line.error is None
    assert suite.case_count == 2


def test_issue_example_message(write):
    path = write(
        """
        graders:
          - kind: numeric
        cases:
          - name: first
          - name: second
          - name: growth
            turns: [{input: a}]
            graders:
              - kind: numeric
                accept_percent: true
                absolute_tolerence: 0.01
        """
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:11:9: cases[2].graders[0]: unknown option 'absolute_tolerence' "
        "for kind 'numeric' (did you mean 'absolute_tolerance'?)"
    ]


def test_code_import_errors_name_case_turn_grader_and_exception(write, tmp_path):
    (tmp_path / "suite_loader_graders.py").write_text(
        "def fn(ctx):\n    return True\n", encoding="utf-8"
    )
    path = write(
        """
        cases:
          - name: growth
            turns:
              - input: x
              - input: y
                graders:
                  - kind: code
                    grader: "missing_module_for_suite_test:fn"
                  - kind: code
                    grader: "suite_loader_graders:nothere"
                  - kind: code
                    grader: "suite_loader_graders:fn"
        """
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    assert [str(p).replace(str(path), "suite.yaml") for p in caught.value.problems] == [
        "suite.yaml:8:21: cases[0].turns[1].graders[0].grader: case 'growth', turn 1: cannot "
        "resolve grader 'missing_module_for_suite_test:fn': module "
        "'missing_module_for_suite_test' was not found (ModuleNotFoundError: No module named "
        f"'missing_module_for_suite_test'); put it beside the suite file ({tmp_path}) or on the "
        "Python path, or fix the name",
        "suite.yaml:10:21: cases[0].turns[1].graders[1].grader: case 'growth', turn 1: cannot "
        "resolve grader 'suite_loader_graders:nothere': module 'suite_loader_graders' has "
        "no attribute 'nothere' (AttributeError: module 'suite_loader_graders' has no "
        "attribute 'nothere'); check the name after the ':'",
    ]
