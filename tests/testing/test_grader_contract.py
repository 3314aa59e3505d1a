"""GraderContract as a pack uses it: subclassed in a test file that pytest runs (pytester, in
a subprocess that sees the installed test packs)."""

from __future__ import annotations

import re

import pytest

CONTRACT_TESTS = """
from hypothesis import settings

from gradekit.testing import GraderContract, samples


class TestFirstWord(GraderContract):
    kind = "acme.first_word"


class TestTokenF1(GraderContract):
    kind = "acme.token_f1"
    configs = ({}, {"minimum": 0.8})


class TestJudge(GraderContract):
    kind = "acme.judge"


class TestJudgeDeclared(GraderContract):
    kind = "acme.judge"
    deterministic = False


class TestNormalised(GraderContract):
    kind = "acme.normalised"
    sample_strategy = samples(require_expected=True)


class TestLocked(GraderContract):
    kind = "acme.locked"


class TestLenient(GraderContract):
    kind = "acme.lenient"
    configs = ({"threshold": 0.5},)


class TestLogged(GraderContract):
    kind = "acme.logged"


class TestShoutUndotted(GraderContract):
    kind = "shout"


class TestShout(GraderContract):
    kind = "acme.shout"
    configs = ({}, {"min_length": 3})
    hypothesis_settings = settings(max_examples=10)


class TestLength(GraderContract):
    kind = "acme.length"
    configs = ({"limit": 5},)
"""

# The tests each broken kind fails: every other test of it passes or is skipped.
EXPECTED_FAILURES = {
    "TestFirstWord::test_well_formed[config0]",
    "TestTokenF1::test_well_formed[config0]",
    "TestTokenF1::test_well_formed[config1]",
    "TestJudge::test_deterministic[config0]",
    "TestJudge::test_pickles[config0]",
    "TestNormalised::test_leaves_sample[config0]",
    "TestLocked::test_pickles[config0]",
    "TestLenient::test_unknown_option[config0]",
    "TestLenient::test_wrong_type[config0]",
    "TestLogged::test_inline_pure[config0]",
    "TestShoutUndotted::test_namespaced",
}


def _outcomes(output: str) -> dict[str, str]:
    found = re.findall(r"test_contracts\.py::(\S+) (PASSED|FAILED|SKIPPED)", output)
    return dict(found)


def test_each_broken_kind_fails_its_rule_with_a_falsifying_example(
    pytester: pytest.Pytester, pack_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", pack_env["PYTHONPATH"])
    pytester.makepyfile(test_contracts=CONTRACT_TESTS)
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider", "-rs")
    output = result.stdout.str()
    outcomes = _outcomes(output)
    failed = {test for test, outcome in outcomes.items() if outcome == "FAILED"}
    assert failed == EXPECTED_FAILURES, output
    # Each failure names its rule and shows the example hypothesis shrank it to.
    result.stdout.fnmatch_lines(
        [
            "*TestFirstWord.test_well_formed[[]config0[]]*",
            "grade never raises and returns a well-formed GradeResult: broken",
            "acme.first_word: well_formed: grade raised IndexError: list index out of range *",
            "  config: {}",
            "  Falsifying example: Sample(*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*TestLocked.test_pickles[[]config0[]]*",
            "acme.locked: pickles: the grader does not pickle: TypeError: cannot pickle *",
            "  Falsifying example: {}",
        ]
    )
    assert output.count("Falsifying example: ") == len(EXPECTED_FAILURES)
    # The clean kinds pass everything they can do; what they cannot do is skipped.
    for test, outcome in outcomes.items():
        if test.startswith(("TestShout::", "TestLength::", "TestJudgeDeclared::")):
            assert outcome in {"PASSED", "SKIPPED"}, (test, output)
    assert outcomes["TestShout::test_agrade_agrees[config1]"] == "SKIPPED"
    assert outcomes["TestLength::test_agrade_agrees[config0]"] == "PASSED"
    assert outcomes["TestJudgeDeclared::test_deterministic[config0]"] == "SKIPPED"
    result.stdout.fnmatch_lines(["SKIPPED *agrade_agrees: the grader has no agrade"])
    result.stdout.fnmatch_lines(
        ["SKIPPED *deterministic: the grader is declared not deterministic"]
    )


def test_a_contract_class_without_a_kind_says_what_to_add(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from gradekit.testing import GraderContract

        class TestForgot(GraderContract):
            configs = ({},)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "test_creates")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*TypeError: TestForgot subclasses GraderContract but sets no kind; add "
            "`kind = 'acme.rouge'` (the kind to check) to the class"
        ]
    )
