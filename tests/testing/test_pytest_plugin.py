"""`pytest --gradekit-pack DIST`: the contract over every kind an installed distribution
registers, and a plugin that costs nothing when the option is not given."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

BROKEN_FAILURES = {
    "acme.bad_examples::examples",
    "acme.first_word::well_formed[config0]",
    "acme.judge::deterministic[config0]",
    "acme.judge::pickles[config0]",
    "acme.lenient::unknown_option[config0]",
    "acme.lenient::wrong_type[config0]",
    "acme.locked::pickles[config0]",
    "acme.logged::inline_pure[config0]",
    "acme.normalised::leaves_sample[config0]",
    "acme.prefix::creates[config0]",
    "acme.prefix::well_formed[config0]",
    "acme.prefix::deterministic[config0]",
    "acme.prefix::leaves_sample[config0]",
    "acme.prefix::agrade_agrees[config0]",
    "acme.prefix::blocking_agrees[config0]",
    "acme.prefix::inline_pure[config0]",
    "acme.prefix::pickles[config0]",
    "acme.token_f1::well_formed[config0]",
    "shout::namespaced",
}


def _outcomes(output: str, pack: str) -> dict[str, str]:
    pattern = rf"gradekit-pack/{re.escape(pack)}::(\S+) (PASSED|FAILED|SKIPPED)"
    return dict(re.findall(pattern, output))


@pytest.fixture
def pack_pytester(
    pytester: pytest.Pytester, pack_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", pack_env["PYTHONPATH"])
    # On CI, pytest writes whole failure messages into its short summary too: the outputs
    # these tests read must be the same wherever they run.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    return pytester


# Slow (about 15 s): the kit over every kind of the broken pack, through pytest in a child.
# The default run checks a clean pack through pytest, and every kind of a broken pack through
# `check-pack` (tests/testing/test_check_pack.py).
@pytest.mark.slow
def test_every_kind_of_a_broken_pack_is_checked(pack_pytester: pytest.Pytester) -> None:
    result = pack_pytester.runpytest_subprocess(
        "--gradekit-pack", "acme-broken", "-v", "-p", "no:cacheprovider"
    )
    output = result.stdout.str()
    outcomes = _outcomes(output, "acme-broken")
    failed = {test for test, outcome in outcomes.items() if outcome == "FAILED"}
    assert failed == BROKEN_FAILURES, output
    # 10 kinds: 2 rules about the kind, 10 per example config (one each; none for the kind
    # whose examples are malformed, which gets its `examples` test instead). A kind whose
    # config is rejected fails every rule that needs a grader.
    assert len(outcomes) == 10 * 2 + 9 * 10 + 1
    result.stdout.fnmatch_lines(
        [
            "*acme.token_f1::well_formed[[]config0[]]*",
            "grade never raises and returns a well-formed GradeResult: broken",
            "acme.token_f1: well_formed: grade raised ValueError: score must be a finite number "
            "in [[]0, 1[]], got *",
            "  config: {}",
            "  Falsifying example: Sample(*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*acme.bad_examples::examples*",
            "acme.bad_examples: examples: examples must be a sequence of config mappings, got "
            "{'strict': True}",
        ]
    )
    assert output.count("Falsifying example: ") == len(BROKEN_FAILURES)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_clean_pack_passes_with_its_declared_examples(pack_pytester: pytest.Pytester) -> None:
    result = pack_pytester.runpytest_subprocess(
        "--gradekit-pack", "acme-clean", "-v", "-p", "no:cacheprovider", "-k", "not agrade"
    )
    outcomes = _outcomes(result.stdout.str(), "acme-clean")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    # acme.length declares 2 examples, acme.shout 2: 2 kind rules + 10 rules x 2 configs
    # each, minus the 4 agrade tests deselected by -k.
    assert len(outcomes) == 2 * (2 + 10 * 2) - 4
    assert "acme.shout::wrong_type[config1]" in outcomes
    assert outcomes["acme.length::inline_pure[config0]"] == "SKIPPED"


def test_a_distribution_that_is_not_installed_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest_subprocess("--gradekit-pack", "acme-nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--gradekit-pack acme-nowhere: that distribution is not installed; install it in "
            "this environment (pip install -e .) or check its name (pip list)"
        ]
    )


def test_without_the_option_the_plugin_adds_no_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_alone():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    helped = pytester.runpytest_subprocess("--help")
    helped.stdout.fnmatch_lines(["*--gradekit-pack=DIST*run gradekit's grader contract over*"])


def test_the_plugin_is_registered_and_imports_nothing_of_gradekit_until_used() -> None:
    code = (
        "import sys, importlib.metadata as m\n"
        "ep = [e for e in m.entry_points(group='pytest11') if e.name == 'gradekit'][0]\n"
        "assert ep.value == 'gradekit.testing.pytest_plugin', ep.value\n"
        "ep.load()\n"
        "loaded = sorted(n for n in sys.modules if n.startswith('gradekit') or "
        "n.split('.')[0] in ('hypothesis', 'yaml', 'cattrs', 'attr'))\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(
        ["gradekit", "gradekit.testing", "gradekit.testing.pytest_plugin"]
    )
