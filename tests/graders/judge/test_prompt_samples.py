"""`samples: N` asks the judge N times about the same output; `aggregate` combines them."""

from __future__ import annotations

import pytest
from judge_server import JudgeServer, judged
from judge_support import Make, grade_one, statistics


def test_majority_of_three_samples(server: JudgeServer, make: Make) -> None:
    server.script(judged(8, "good"), judged(2, "bad"), judged(9, "great"))
    result = grade_one(make(samples=3, aggregate="majority", temperature=0.7))
    assert len(server.requests) == 3
    prompts = {request.prompt for request in server.requests}
    assert len(prompts) == 1  # the same question each time
    assert all(request.body["temperature"] == 0.7 for request in server.requests)
    scores = sorted(sample["raw_score"] for sample in result.details["samples"])  # type: ignore[index]
    assert scores == [2, 8, 9]
    assert result.outcome == "pass"
    assert result.score == pytest.approx(19 / 30)
    assert result.message.startswith("2 of 3 judge samples passed (scores ")


def test_majority_fails_when_most_samples_fail(server: JudgeServer, make: Make) -> None:
    server.script(judged(8), judged(2), judged(3))
    result = grade_one(make(samples=3, aggregate="majority"))
    assert result.outcome == "fail"
    assert result.message.startswith("1 of 3 judge samples passed")


@pytest.mark.parametrize(("aggregate", "score"), [("mean", 0.5), ("median", 0.3)])
def test_mean_and_median(server: JudgeServer, make: Make, aggregate: str, score: float) -> None:
    server.script(judged(3), judged(9), judged(3))
    result = grade_one(make(samples=3, aggregate=aggregate))
    assert result.score == pytest.approx(score)
    assert result.outcome == ("pass" if score >= 0.5 else "fail")


def test_a_mean_equal_to_the_threshold_passes_despite_float_rounding(
    server: JudgeServer, make: Make
) -> None:
    # 0.7 + 0.7 + 0.7 is 2.0999999999999996 in floats: the mean falls below 0.7 in its last bit.
    server.script(judged(7), judged(7), judged(7))
    result = grade_one(make(samples=3, aggregate="mean", threshold=0.7))
    assert result.score == pytest.approx(0.7)
    assert result.outcome == "pass"


def test_one_failed_sample_makes_the_grade_an_error(server: JudgeServer, make: Make) -> None:
    from judge_server import text

    server.script(judged(8), text("no idea"), judged(8))
    result = grade_one(make(samples=3))
    assert result.outcome == "error"
    stats = statistics()
    assert stats is not None
    assert (stats.calls, stats.errors) == (3, 1)
