"""The `math` kind: mathematical equivalence of the final answer, by math-verify, in a worker.

Held against the PRM800K grader (`mathruler.grader.grade_answer`, the checker OpenAI's PRM800K
and MATH-500 results are scored with, with the MATH data set's own answer normalisation): on
gold answers written as the MATH data set writes them and on perturbed ones, both checkers
give the same verdict, computed here from the reference itself, except on the documented
leniencies of math-verify (docs/kinds.md, "math").
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import gradekit
from gradekit import Sample
from gradekit.core.context import current_run
from gradekit.process import workers

pytest.importorskip("math_verify")
reference = pytest.importorskip("mathruler.grader")

# Final answers as the MATH data set writes them (MATH-500's test split among them).
MATH_GOLD = [
    r"\frac{14}{3}",
    r"\left( 3, \frac{\pi}{2} \right)",
    "p - q",
    "9",
    r"\text{Evelyn}",
    "42",
    r"90^\circ",
    r"3\sqrt{13}",
    "-2",
    "x^2+7x+10",
    "[-2,7]",
    r"\frac{3}{4}",
    "0.75",
    r"\sqrt{2}",
    r"(-\infty, 2] \cup (3, \infty)",
    r"\{1, 2\}",
    "2220",
    r"\frac{\sqrt{3}}{2}",
    "10\\%",
    r"\pi",
    "x = 3",
    "18.90",
]

# Answers a model might give instead: equal forms and wrong values.
PERTURBED = {
    r"\frac{14}{3}": ["14/3", r"\frac{13}{3}", "4.67"],
    "9": ["9.0", "-9", "10"],
    r"\frac{3}{4}": ["0.75", "3/4", r"\dfrac{3}{4}", "0.7", r"\frac{4}{3}"],
    "0.75": [r"\frac{3}{4}", "3/4", "0.750", "0.76"],
    "[-2,7]": ["[-2, 7]", "(-2,7]", "[-2,8]"],
    r"\sqrt{2}": [r"\sqrt{3}"],
    "x^2+7x+10": ["(x+2)(x+5)", "x^2+7x+11", "10+7x+x^2"],
    "p - q": ["-q + p", "q - p"],
    r"\frac{\sqrt{3}}{2}": [r"\frac{1}{2}\sqrt{3}", r"\sqrt{3}/2", r"\frac{\sqrt{2}}{2}"],
    r"\left( 3, \frac{\pi}{2} \right)": [r"(3, \pi/2)", r"(3, \pi)"],
    "-2": ["-2.0", "2"],
    "2220": ["2,220", "2221"],
}

# Where math-verify is more lenient than the PRM800K grader, on purpose (docs/kinds.md):
# unreduced fractions, decimals equal to `float_rounding` places, powers the reference
# refuses to evaluate.
LENIENT = [
    (r"\frac{14}{3}", r"\frac{28}{6}"),
    (r"\frac{14}{3}", "4.666666666"),
    ("9", r"\frac{18}{2}"),
    (r"\sqrt{2}", "2^{1/2}"),
    (r"\sqrt{2}", "1.414213562"),
]

PAIRS = [(gold, answer) for gold in MATH_GOLD for answer in [gold, *PERTURBED.get(gold, [])]]


@pytest.fixture(scope="module", autouse=True)
def _workers_stopped() -> Iterator[None]:
    """Grades outside a run leave their workers warm: stopped after this module's tests."""
    yield
    workers.stop_workers(current_run())


@pytest.fixture(scope="module")
def math_grader() -> gradekit.Grader:
    return gradekit.create("math")


def boxed(answer: str) -> str:
    return f"Adding the two cases gives the result. The final answer is $\\boxed{{{answer}}}$."


def grade(grader: gradekit.Grader, output: str, expected: object) -> gradekit.GradeResult:
    return grader.grade(Sample(output=output, expected=expected, case="growth"))


def test_agrees_with_the_prm800k_grader_on_math_answers(math_grader: gradekit.Grader) -> None:
    verdicts = [
        (gold, answer, reference.grade_answer(answer, gold), graded)
        for gold, answer in PAIRS
        for graded in [grade(math_grader, boxed(answer), gold)]
    ]
    assert all(result.error is None for *_, result in verdicts)
    differ = [(g, a, ref) for g, a, ref, result in verdicts if result.passed != ref]
    assert differ == []
    # Not a vacuous agreement: the set holds both verdicts.
    assert {ref for _, _, ref, _ in verdicts} == {True, False}


def test_gold_answers_pass_against_themselves(math_grader: gradekit.Grader) -> None:
    for gold in MATH_GOLD:
        assert reference.grade_answer(gold, gold)
        assert grade(math_grader, boxed(gold), gold).passed, gold


@pytest.mark.parametrize(("gold", "answer"), LENIENT)
def test_is_more_lenient_than_the_reference_where_documented(
    math_grader: gradekit.Grader, gold: str, answer: str
) -> None:
    assert reference.grade_answer(answer, gold) is False
    assert grade(math_grader, boxed(answer), gold).passed


def test_gsm8k_answers_after_the_hashes(math_grader: gradekit.Grader) -> None:
    last = gradekit.create("math", config={"extract": "last_number"})
    solution = (
        "Natalia sold 48/2 = 24 clips in May.\nAltogether she sold 48+24 = 72 clips.\n#### 72"
    )
    assert grade(last, solution, 72).passed
    assert reference.grade_answer("72", "72")
    result = grade(last, solution.replace("72 clips.\n#### 72", "71 clips.\n#### 71"), "72")
    assert (result.outcome, result.message) == ("fail", "expected '72', got '71'")


# -- each feature ---------------------------------------------------------------------------


def test_latex_fraction_equals_a_decimal_and_a_slash(math_grader: gradekit.Grader) -> None:
    result = grade(math_grader, "0.75", r"\frac{3}{4}")
    assert (result.outcome, result.message) == ("pass", r"answer '0.75' equals '\\frac{3}{4}'")
    assert result.details == {"answer": "0.75", "expected": r"\frac{3}{4}", "extract": "auto"}
    assert grade(math_grader, "3/4", r"\frac{3}{4}").passed
    result = grade(math_grader, "so it is 0.8", "3/4")
    assert (result.outcome, result.message) == ("fail", "expected '3/4', got '0.8'")


def test_auto_takes_the_boxed_answer_over_later_numbers(math_grader: gradekit.Grader) -> None:
    text = r"Is it \boxed{5}? No. It is \boxed{\frac{1}{2}}, checked with 3 and 4 examples."
    result = grade(math_grader, text, "0.5")
    assert (result.outcome, result.details["answer"]) == ("pass", r"\frac{1}{2}")


def test_auto_takes_the_answer_after_final_answer_is(math_grader: gradekit.Grader) -> None:
    result = grade(math_grader, "The final answer is 12. I checked 5 more examples.", 12)
    assert (result.outcome, result.details["answer"]) == ("pass", "12")


def test_boxed_takes_only_the_last_boxed_answer() -> None:
    grader = gradekit.create("math", config={"extract": "boxed"})
    assert grade(grader, r"first \boxed{2} then \boxed{\{1, 2\}}", r"\{2, 1\}").passed
    result = grade(grader, "The answer is 4.", "4")
    assert (result.outcome, result.message) == (
        "fail",
        "no \\boxed{} answer in the output (extract: boxed): 'The answer is 4.'",
    )


def test_last_number_reads_numbers_as_numeric_does() -> None:
    grader = gradekit.create("math", config={"extract": "last_number"})
    assert grade(grader, "12 apples cost $1,250.50 in total", "1250.5").passed
    result = grade(grader, "no digits here", "3")
    assert (result.outcome, result.message) == (
        "fail",
        "no number in the output (extract: last_number): 'no digits here'",
    )


def test_whole_reads_the_whole_output_sets_intervals_and_expressions() -> None:
    grader = gradekit.create("math", config={"extract": "whole"})
    assert grade(grader, r"\{3, 1, 2\}", r"\{1, 2, 3\}").passed
    assert grade(grader, r"(x-1)(x+1)", "x^2-1").passed
    assert grade(grader, r"[1, 2) \cup (3, \infty)", r"[1,2)\cup(3,\infty)").passed
    result = grade(grader, "[1,2)", "(1,2]")
    assert (result.outcome, result.message) == ("fail", "expected '(1,2]', got '[1,2)'")


def test_float_rounding_decides_how_close_a_decimal_must_be() -> None:
    coarse = gradekit.create("math", config={"float_rounding": 2})
    fine = gradekit.create("math")
    assert grade(coarse, "0.3333", r"\frac{1}{3}").passed
    assert not grade(fine, "0.3333", r"\frac{1}{3}").passed


def test_an_output_without_an_answer_fails(math_grader: gradekit.Grader) -> None:
    result = grade(math_grader, "I do not know.", "3/4")
    assert (result.outcome, result.error, result.message) == (
        "fail",
        None,
        "no mathematical answer found in the output (extract: auto): 'I do not know.'",
    )


def test_an_unparsable_expected_value_is_an_error_naming_the_case(
    math_grader: gradekit.Grader,
) -> None:
    result = grade(math_grader, "42", "$$")
    assert result.outcome == "error"
    assert result.message == (
        "the expected value '$$' of case 'growth' is not a mathematical answer (math-verify "
        "reads no expression in it); write it as LaTeX, such as \\frac{3}{4}, or as a plain "
        "expression, such as 3/4"
    )
    turn = math_grader.grade(Sample(output="1", expected="$$", case="c", turn=2))
    assert "of case 'c', turn 2 is not" in turn.message


def test_no_expected_value_is_an_error(math_grader: gradekit.Grader) -> None:
    result = math_grader.grade(Sample(output="1"))
    assert result.outcome == "error"
    assert result.message.startswith("no expected value: math compares the output")


def test_a_check_past_its_timeout_is_killed_and_fails() -> None:
    grader = gradekit.create("math", config={"extract": "whole", "check_timeout": 1})
    result = grade(grader, "2^{2^{2^{2^{2^{10}}}}}", "5")
    assert (result.outcome, result.message) == (
        "fail",
        "the symbolic check did not end within 1s: counted as not equal; raise check_timeout "
        "to give it longer",
    )
    assert result.details is not None and result.details["timed_out"] is True
    assert grade(grader, "5", "5").passed  # a fresh worker takes the killed one's place


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        (
            "float_rounding: 20",
            "cases[0].graders[0].float_rounding: must be a whole number from 0 to 15, got 20",
        ),
        (
            "extract: boxes",
            "cases[0].graders[0].extract: expected one of 'auto', 'boxed', 'last_number', "
            "'whole', got 'boxes'",
        ),
    ],
)
def test_options_are_checked_at_load(tmp_path: Path, option: str, problem: str) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: m\ncases:\n  - name: a\n    output: '1'\n    expected: '1'\n"
        f"    graders:\n      - kind: math\n        {option}\n",
        encoding="utf-8",
    )
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.load_suite(suite)
    assert "suite.yaml:8:" in str(caught.value)
    assert str(caught.value).endswith(problem)


def test_the_entry_timeout_stays_the_runner_s() -> None:
    from gradekit.registry.entries import build_entry

    entry = build_entry({"kind": "math", "timeout": 30, "check_timeout": 2})
    assert entry is not None
    assert entry.grader.check_timeout == 2  # type: ignore[attr-defined]
    assert entry.timeout == 30  # the whole grade, a worker's start included


def test_without_math_verify_the_kind_is_a_config_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "math_verify", None)  # makes it unimportable
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("math")
    assert str(caught.value) == (
        "invalid options for kind 'math'\n$.kind: the math kind needs the math-verify library "
        "(math_verify is missing); install it with pip install 'gradekit[math]'"
    )


def test_a_suite_run_grades_through_the_runner(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """\
            name: m
            graders: [{kind: math}]
            cases:
              - {name: right, output: 'so $\\boxed{\\frac{1}{2}}$', expected: 0.5}
              - {name: wrong, output: 'so $\\boxed{\\frac{1}{3}}$', expected: 0.5}
            """
        ),
        encoding="utf-8",
    )
    outside = workers.live_pids()  # warm from the grades above, outside any run
    report = gradekit.run_suite(gradekit.load_suite(suite), jobs=2)
    assert [(case.name, case.passed) for case in report.cases] == [
        ("right", True),
        ("wrong", False),
    ]
    assert set(workers.live_pids()) <= set(outside)  # the run's workers ended with it


def test_in_a_process_isolated_grade_the_check_runs_in_that_process(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: m\ngraders: [{kind: math, isolation: process, sandbox: none}]\ncases:\n"
        "  - {name: right, output: '3/4', expected: '0.75'}\n"
        "  - {name: wrong, output: '3/5', expected: '0.75'}\n",
        encoding="utf-8",
    )
    report = gradekit.run_suite(gradekit.load_suite(suite), jobs=1)
    results = [case.turns[0].results[0].result for case in report.cases]
    assert [(r.outcome, r.message) for r in results] == [
        ("pass", "answer '3/4' equals '0.75'"),
        ("fail", "expected '0.75', got '3/5'"),
    ]
