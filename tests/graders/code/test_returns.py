"""How what a code grader returns becomes the result: the table in docs/code-graders.md."""

from __future__ import annotations

import asyncio

import pytest

from gradekit import GradeResult, Sample
from gradekit.graders.user_code import Code

SAMPLE = Sample(case="growth", turn=0, input="How much?", output="25,587", expected=25587)


def grade(reference: str, threshold: float | None = None, sample: Sample = SAMPLE) -> GradeResult:
    return Code(grader=f"my_benchmarks:{reference}", threshold=threshold).grade(sample)


def outcome(result: GradeResult) -> tuple[bool, float, str | None]:
    return result.passed, result.score, result.error


@pytest.mark.parametrize(
    ("output", "passed"),
    [("25587", True), ("25,587", True), ("25587.0", True), (25587, True), ("25000", False)],
)
def test_numeric_equal(output: object, passed: bool) -> None:
    result = grade("numeric_equal", sample=Sample(output=output, expected=25587))
    assert outcome(result) == (passed, 1.0 if passed else 0.0, None)
    assert (result.kind, result.name) == ("code", "numeric_equal")
    assert result.message == f"returned {passed}"


def test_true_and_false_ignore_the_threshold() -> None:
    assert outcome(grade("numeric_equal", threshold=1.0)) == (True, 1.0, None)
    failing = Sample(output="25000", expected=25587)
    assert outcome(grade("numeric_equal", threshold=0.0, sample=failing)) == (False, 0.0, None)


@pytest.mark.parametrize(
    ("threshold", "passed", "message"),
    [
        (0.7, True, "score 0.75 >= threshold 0.7"),
        (0.8, False, "score 0.75 < threshold 0.8"),
        (None, True, "score 0.75 >= default threshold 0.5"),
        (0.75, True, "score 0.75 >= threshold 0.75"),
    ],
)
def test_threshold_on_a_bare_float(threshold: float | None, passed: bool, message: str) -> None:
    result = grade("returns_float", threshold=threshold)
    assert outcome(result) == (passed, 0.75, None)
    assert result.message == message


def test_default_threshold_is_inclusive() -> None:
    assert outcome(grade("returns_half")) == (True, 0.5, None)
    assert outcome(grade("returns_just_below_half")) == (False, 0.4999, None)


def test_an_int_is_a_score() -> None:
    result = grade("returns_int_one")
    assert outcome(result) == (True, 1.0, None)
    assert isinstance(result.score, float)


def test_grader_result_is_used_as_is() -> None:
    result = grade("returns_grader_result")
    assert outcome(result) == (True, 0.6, None)
    assert result.message == "close enough"
    assert result.details == {"response": "25,587", "parts": (1, 2.5, None, True)}
    with pytest.raises(TypeError):
        result.details["response"] = "x"  # type: ignore[index]


def test_grader_result_without_passed_uses_the_threshold() -> None:
    assert outcome(grade("returns_grader_result", threshold=0.7)) == (False, 0.6, None)


def test_explicit_passed_wins_over_score_and_threshold() -> None:
    result = grade("returns_explicit_fail", threshold=0.1)
    assert outcome(result) == (False, 1.0, None)
    assert result.message == "right number, wrong unit"


@pytest.mark.parametrize(
    ("reference", "returned"),
    [("returns_dict", "a dict"), ("returns_none", "None"), ("returns_text", "a str")],
)
def test_other_return_types_are_errors(reference: str, returned: str) -> None:
    result = grade(reference)
    error = (
        f"TypeError: grader 'my_benchmarks:{reference}' returned {returned}; return True/False, "
        "a number in [0, 1] or a gradekit.code.GraderResult"
    )
    assert outcome(result) == (False, 0.0, error)
    assert result.outcome == "error"


@pytest.mark.parametrize(
    ("reference", "score"),
    [("returns_out_of_range", "1.5"), ("returns_nan", "nan"), ("returns_negative_result", "-0.1")],
)
def test_scores_outside_zero_one_are_errors_never_clamped(reference: str, score: str) -> None:
    result = grade(reference)
    error = (
        f"ValueError: grader 'my_benchmarks:{reference}' returned score {score}, which is not "
        "a finite number in [0, 1]; scores are never clamped: return a score in [0, 1]"
    )
    assert outcome(result) == (False, 0.0, error)


@pytest.mark.parametrize(
    ("reference", "error"),
    [
        (
            "returns_nan_details",
            "ValueError: details are not JSON-serialisable: details['ratio'] is nan; "
            "JSON has no NaN or infinity",
        ),
        (
            "returns_object_details",
            "TypeError: details are not JSON-serialisable: details['items'][0] is an object; "
            "use only dict (with str keys), list, str, int, float, bool and None",
        ),
        (
            "returns_cyclic_details",
            "ValueError: details are not JSON-serialisable: details['self'] refers back to a "
            "containing value (a cycle)",
        ),
        (
            "returns_int_key_details",
            "TypeError: details are not JSON-serialisable: details has the key 1 (int); "
            "JSON object keys must be strings",
        ),
        (
            "returns_list_details",
            "TypeError: details are not JSON-serialisable: details must be a dict, got a list; "
            "use only dict (with str keys), list, str, int, float, bool and None",
        ),
    ],
)
def test_details_must_be_strict_json(reference: str, error: str) -> None:
    assert outcome(grade(reference)) == (False, 0.0, error)


def test_a_raising_grader_gives_an_error_result() -> None:
    result = grade("raises_value_error")
    assert outcome(result) == (False, 0.0, "ValueError: cannot grade turn 0")
    assert result.outcome == "error"
    assert (result.kind, result.name) == ("code", "raises_value_error")


def test_async_grader_is_awaited_when_graded_synchronously() -> None:
    result = grade("async_numeric_equal")
    assert outcome(result) == (True, 1.0, None)
    assert (result.message, result.details) == ("async", {"awaited": True})


def test_async_grader_through_agrade() -> None:
    grader = Code(grader="my_benchmarks:async_numeric_equal")
    result = asyncio.run(grader.agrade(SAMPLE))
    assert outcome(result) == (True, 1.0, None)


def test_only_an_async_grader_has_agrade() -> None:
    # The runner awaits a grader with `agrade` on its loop and runs the others on its pool,
    # so a plain function must not offer one (it would block the loop).
    sync = Code(grader="my_benchmarks:numeric_equal")
    assert getattr(sync, "agrade", None) is None
    with pytest.raises(AttributeError) as caught:
        sync.agrade(SAMPLE)
    assert str(caught.value) == (
        "code grader 'my_benchmarks:numeric_equal' is a plain function: it has no agrade; "
        "call grade()"
    )
    assert callable(Code(grader="my_benchmarks:async_numeric_equal").agrade)
    instance = Code(grader="my_benchmarks:async_instance")
    assert outcome(asyncio.run(instance.agrade(SAMPLE))) == (False, 0.25, None)
    assert outcome(instance.grade(SAMPLE)) == (False, 0.25, None)


def test_async_grader_graded_synchronously_inside_a_running_loop() -> None:
    grader = Code(grader="my_benchmarks:async_numeric_equal")

    async def main() -> GradeResult:
        return grader.grade(SAMPLE)

    assert outcome(asyncio.run(main())) == (True, 1.0, None)


def test_async_grader_that_raises() -> None:
    grader = Code(grader="my_benchmarks:async_raises")
    assert outcome(grader.grade(SAMPLE)) == (False, 0.0, "ValueError: async failure")
    assert outcome(asyncio.run(grader.agrade(SAMPLE))) == (False, 0.0, "ValueError: async failure")


def test_duration_is_measured() -> None:
    assert grade("returns_float").duration_ms > 0.0
    assert grade("raises_value_error").duration_ms > 0.0
