"""`pytest suite.yaml`: each case of a suite a test, run by pytest itself (`pytester`) on real
suite files: outcomes, messages, errors apart from failures, `-k`, `-m`, `--lf`, xdist."""

from __future__ import annotations

import importlib.util
import re

import pytest

import gradekit
from gradekit import ConfigError, Sample
from gradekit.testing import GradeErrored, assert_grade

SUITE = """\
name: arithmetic
tags: [smoke]
graders:
  - kind: numeric
    absolute_tolerance: 0.01
cases:
  - name: adds
    tags: ["area:math", "needs (net)", math-easy]
    input: "2 + 2?"
    output: "4"
    expected: 4
  - name: divides
    tags: [hard]
    input: "1 / 3?"
    output: "0.25"
    expected: 0.333
  - name: spells
    tags: [skip]
    output: "four"
    expected: 4
"""


@pytest.fixture
def suites(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # On CI, pytest writes whole failure messages into its short summary: the outputs these
    # tests read must be the same wherever they run.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    pytester.makefile(".yaml", suite=SUITE)
    return pytester


def _outcomes(output: str) -> dict[str, str]:
    return dict(re.findall(r"^(\S+::.+?) (PASSED|FAILED|ERROR|SKIPPED)", output, re.M))


def test_each_case_is_a_test_failing_with_its_graders_message_and_sample(
    suites: pytest.Pytester,
) -> None:
    result = suites.runpytest_subprocess("suite.yaml", "-v", "--strict-markers")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    assert _outcomes(result.stdout.str()) == {
        "suite.yaml::adds": "PASSED",
        "suite.yaml::divides": "FAILED",
        "suite.yaml::spells": "ERROR",  # tagged `skip`: a tag, not pytest's skip
    }
    result.stdout.fnmatch_lines(
        [
            "*_ divides _*",
            "turn 0: numeric failed: expected '0.333', got '0.25' (off by 0.083; allowed 0.01)",
            "",
            "case divides failed (suite.yaml:12:5)",
            "",
            "turn 0:",
            "  input: 1 / 3?",
            "  output: 0.25",
            "  expected: 0.333",
        ]
    )
    # A grader's error is pytest's error (at setup), apart from the failures.
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of spells _*",
            "turn 0: numeric error: ValueError: 'four' is not a number",
            "",
            "case spells errored (suite.yaml:17:5)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "FAILED suite.yaml::divides - Failed: turn 0: numeric failed: *",
            "ERROR suite.yaml::spells - Failed: turn 0: numeric error: *",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_attempts_and_turns_are_shown_in_the_test_names(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        suite="""\
graders: [{kind: equality}]
cases:
  - name: guesses
    expected: "7"
    attempts: [{output: "7"}, {output: "8"}]
  - name: chats
    turns:
      - {input: hi, output: hello, expected: hello}
      - {input: bye, output: bye, expected: goodbye}
""",
    )
    result = pytester.runpytest_subprocess("suite.yaml", "-v")
    assert _outcomes(result.stdout.str()) == {
        "suite.yaml::guesses[attempt0]": "PASSED",
        "suite.yaml::guesses[attempt1]": "FAILED",
        "suite.yaml::chats[2turns]": "FAILED",
    }
    result.stdout.fnmatch_lines(["case guesses [[]attempt 1[]] failed (suite.yaml:5:31)"])
    # The failing turn named, and its sample alone shown.
    result.stdout.fnmatch_lines(
        ["turn 1: equality failed: *", "", "case chats failed *", "", "turn 1:", "  input: bye"]
    )
    assert "  input: hi" not in result.stdout.str()
    # `-k` reaches an attempt by its name.
    result = pytester.runpytest_subprocess("suite.yaml", "-v", "-k", "guesses and attempt1")
    assert _outcomes(result.stdout.str()) == {"suite.yaml::guesses[attempt1]": "FAILED"}


def test_k_selects_cases_by_name(suites: pytest.Pytester) -> None:
    result = suites.runpytest_subprocess("suite.yaml", "-v", "-k", "adds or divides")
    result.assert_outcomes(passed=1, failed=1, deselected=1)


def test_m_selects_cases_by_tag_under_strict_markers(suites: pytest.Pytester) -> None:
    result = suites.runpytest_subprocess("suite.yaml", "-v", "--strict-markers", "-m", "hard")
    assert _outcomes(result.stdout.str()) == {"suite.yaml::divides": "FAILED"}
    # The suite's tags are every case's.
    result = suites.runpytest_subprocess(
        "suite.yaml", "--strict-markers", "-m", "smoke and not hard"
    )
    result.assert_outcomes(passed=1, errors=1, deselected=1)
    # A tag pytest cannot register as a marker is a keyword of its case.
    result = suites.runpytest_subprocess("suite.yaml", "-v", "--strict-markers", "-m", "math-easy")
    assert _outcomes(result.stdout.str()) == {"suite.yaml::adds": "PASSED"}
    result = suites.runpytest_subprocess("suite.yaml", "-v", "--strict-markers", "-k", "area:math")
    assert _outcomes(result.stdout.str()) == {"suite.yaml::adds": "PASSED"}


def test_last_failed_reruns_the_failed_and_errored_cases(suites: pytest.Pytester) -> None:
    suites.runpytest_subprocess("suite.yaml").assert_outcomes(passed=1, failed=1, errors=1)
    result = suites.runpytest_subprocess("suite.yaml", "--lf", "-v")
    result.assert_outcomes(failed=1, errors=1, deselected=1)
    assert set(_outcomes(result.stdout.str())) == {"suite.yaml::divides", "suite.yaml::spells"}


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist not installed")
def test_xdist_grades_the_cases_in_its_workers(suites: pytest.Pytester) -> None:
    result = suites.runpytest_subprocess("suite.yaml", "-n", "2", "-v")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*turn 0: numeric failed: expected '0.333', got '0.25'*"])


def test_a_suite_that_does_not_load_is_a_collection_error_naming_line_and_key(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".yaml",
        suite="cases:\n  - name: a\n    output: '1'\n    graders:\n      - kind: numeric\n"
        "        tolerance: 2\n",
    )
    result = pytester.runpytest_subprocess("suite.yaml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*ERROR collecting suite.yaml*", "*suite.yaml:6:9: cases[[]0[]].graders[[]0[]]*tolerance*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_what_the_loader_warns_of_is_in_the_warnings_summary(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        suite="graders: [{kind: equality}]\ncases:\n  - {name: a, output: x, ground_truth: x}\n",
    )
    result = pytester.runpytest_subprocess("suite.yaml")
    result.stdout.fnmatch_lines(
        [
            "*warnings summary*",
            "*gradekit suite: *suite.yaml:3:*'ground_truth' is kept as metadata*",
        ]
    )


def test_files_matching_the_ini_patterns_are_suites_and_no_other_yaml(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\ngradekit_suites = *.suite.yaml\n")
    pytester.makefile(".suite.yaml", math=SUITE)
    pytester.makefile(".yaml", settings="not: [a, suite\n")  # not even YAML: never read
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess("-v")
    assert _outcomes(result.stdout.str()) == {
        "math.suite.yaml::adds": "PASSED",
        "math.suite.yaml::divides": "FAILED",
        "math.suite.yaml::spells": "ERROR",
        "test_plain.py::test_plain": "PASSED",
    }


def test_without_a_pattern_a_folder_of_yaml_files_adds_no_test(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", suite=SUITE)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)


def test_a_dataset_line_that_cannot_be_read_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", suite="dataset: data.jsonl\ngraders: [{kind: equality}]\n")
    pytester.makefile(
        ".jsonl", data='{"name": "ok", "output": "a", "expected": "a"}\n{"name": "bad", \n'
    )
    result = pytester.runpytest_subprocess("suite.yaml", "-v")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*data.jsonl:2*"])


def test_assert_grade_inside_a_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
from gradekit.testing import GradeErrored, assert_grade

def test_answer():
    assert_grade({"output": "0.25", "expected": 0.333}, {"kind": "numeric"})

def test_close_enough():
    result = assert_grade(
        {"output": "0.33", "expected": 0.333}, {"kind": "numeric", "absolute_tolerance": 0.01}
    )
    assert result.passed
"""
    )
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: numeric failed: expected '0.333', got '0.25' *",
            "E*  output: 0.25",
            "E*  expected: 0.333",
        ]
    )


def test_assert_grade_returns_the_passing_result() -> None:
    result = assert_grade(
        Sample(output="0.33", expected=0.333), {"kind": "numeric", "absolute_tolerance": 0.01}
    )
    assert (result.kind, result.passed) == ("numeric", True)


def test_assert_grade_applies_the_entrys_threshold() -> None:
    entry = {"kind": "contains", "values": ["a", "b"], "mode": "all", "threshold": 0.5}
    assert_grade({"output": "a"}, entry)
    with pytest.raises(AssertionError):
        assert_grade({"output": "c"}, entry)


def test_assert_grade_takes_a_grader() -> None:
    grader = gradekit.create("equality")
    with pytest.raises(
        AssertionError,
        match=r"^equality failed: expected 'yes', got 'no'\n  output: no\n  expected: yes$",
    ):
        assert_grade({"output": "no", "expected": "yes"}, grader)


def test_a_grader_that_cannot_grade_is_an_error_not_a_failed_assertion() -> None:
    with pytest.raises(GradeErrored) as raised:
        assert_grade({"output": "four", "expected": 4}, {"kind": "numeric"})
    assert not isinstance(raised.value, AssertionError)
    assert raised.value.error == "ValueError: 'four' is not a number"
    assert "  output: four" in str(raised.value)


def test_an_advisory_entry_never_fails_the_assertion() -> None:
    result = assert_grade(
        {"output": "no", "expected": "yes"}, {"kind": "equality", "advisory": True}
    )
    assert result.passed is False


def test_a_wrong_entry_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="tolerance"):
        assert_grade({"output": "1"}, {"kind": "numeric", "tolerance": 2})
