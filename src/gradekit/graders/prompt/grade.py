"""From judgements to a result: per-sample normalised scores, the aggregate over samples,
the verdict, and the message and details a person and a tool read."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from gradekit import GradeResult
from gradekit._numbers import reaches
from gradekit.graders.prompt.text import Criterion
from gradekit.graders.prompt.reply import Judgement, Score

if TYPE_CHECKING:
    from gradekit.graders.prompt.kind import Prompt

__all__ = ["SampleOutcome", "judged_result"]

REASONING_SHOWN: Final = 160
"""Characters of the judge's reasoning quoted in a message."""


@attrs.frozen
class SampleOutcome:
    """One sample's judgement, whether it came from the cache, and the tokens it cost."""

    judgement: Judgement
    cached: bool
    input_tokens: int
    output_tokens: int


def _normalised(outcome: SampleOutcome, criteria: Sequence[Criterion], max_score: int) -> float:
    judgement = outcome.judgement
    if judgement.score is not None:
        return judgement.score.value / max_score
    weights = [c.weight for c in criteria]
    total = sum(weights)
    values = [score.value / max_score for _, score in judgement.criteria]
    return sum(w * v for w, v in zip(weights, values, strict=True)) / total


def _combine(values: Sequence[float], aggregate: str) -> float:
    return statistics.median(values) if aggregate == "median" else statistics.fmean(values)


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def judged_result(
    grader: Prompt, criteria: Sequence[Criterion], outcomes: Sequence[SampleOutcome]
) -> GradeResult:
    """The grade from every sample's judgement (`outcomes` in sample order)."""
    top = grader.max_score
    scores = [_normalised(outcome, criteria, top) for outcome in outcomes]
    votes = [reaches(score, grader.threshold) for score in scores]
    if grader.aggregate == "majority":
        score = statistics.fmean(scores)
        passed = sum(votes) * 2 > len(votes)
    else:
        score = _combine(scores, grader.aggregate)
        passed = reaches(score, grader.threshold)
    score = min(1.0, max(0.0, score))
    first = outcomes[0].judgement
    details: dict[str, Any] = {
        "model": grader.model,
        "provider": grader.judge_provider,
        "scoring": grader.scoring,
        "max_score": top,
        "threshold": grader.threshold,
        "raw_score": score * top,
        "reasoning": first.reasoning if first.score is None else first.score.reasoning,
    }
    if first.score is not None:
        details.update(_score_details(first.score))
    if criteria:
        details["criteria"] = _criteria_details(grader, criteria, outcomes)
    if len(outcomes) > 1:
        details["aggregate"] = grader.aggregate
        details["samples"] = [
            _sample_details(outcome, normalised, vote, top)
            for outcome, normalised, vote in zip(outcomes, scores, votes, strict=True)
        ]
    details["usage"] = {
        "input_tokens": sum(o.input_tokens for o in outcomes if not o.cached),
        "output_tokens": sum(o.output_tokens for o in outcomes if not o.cached),
    }
    details["cached"] = sum(o.cached for o in outcomes)
    message = _message(
        grader, criteria=criteria, outcomes=outcomes, scores=scores, votes=votes, score=score
    )
    return GradeResult(grader.kind, grader.name, passed, score, message, details)


def _score_details(score: Score) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if score.given != score.value and score.weighted is None:
        found["given_score"] = score.given  # clamped into 0..max_score
    if score.weighted is not None:
        found["written_score"] = score.given
        found["distribution"] = {str(k): v for k, v in score.weighted.distribution.items()}
        found["score_token_mass"] = score.weighted.mass
    return found


def _criteria_details(
    grader: Prompt, criteria: Sequence[Criterion], outcomes: Sequence[SampleOutcome]
) -> list[dict[str, Any]]:
    rows = []
    for position, criterion in enumerate(criteria):
        raw = [outcome.judgement.criteria[position][1] for outcome in outcomes]
        value = _combine([score.value for score in raw], grader.aggregate)
        row: dict[str, Any] = {
            "name": criterion.name,
            "weight": criterion.weight,
            "score": value,
            "normalised": value / grader.max_score,
            "reasoning": raw[0].reasoning,
        }
        row.update(_score_details(raw[0]))
        if len(raw) > 1:
            row["scores"] = [score.value for score in raw]
        rows.append(row)
    return rows


def _sample_details(
    outcome: SampleOutcome, normalised: float, vote: bool, top: int
) -> dict[str, Any]:
    judgement = outcome.judgement
    found: dict[str, Any] = {
        "raw_score": normalised * top,
        "score": normalised,
        "passed": vote,
        "cached": outcome.cached,
    }
    if judgement.score is not None:
        found["reasoning"] = judgement.score.reasoning
        found.update(_score_details(judgement.score))
    else:
        found["criteria"] = {name: score.value for name, score in judgement.criteria}
    return found


def _message(
    grader: Prompt,
    *,
    criteria: Sequence[Criterion],
    outcomes: Sequence[SampleOutcome],
    scores: Sequence[float],
    votes: Sequence[bool],
    score: float,
) -> str:
    top = grader.max_score
    bar = f"threshold {_number(grader.threshold)}"
    if len(outcomes) > 1:
        each = ", ".join(_number(s * top) for s in scores)
        if grader.aggregate == "majority":
            head = (
                f"{sum(votes)} of {len(votes)} judge samples passed (scores {each} of {top}; {bar})"
            )
        else:
            head = (
                f"judge scored {_number(score)}, the {grader.aggregate} of {len(outcomes)} "
                f"samples ({each} of {top}; {bar})"
            )
    elif criteria:
        parts = ", ".join(
            f"{name} {_number(s.value)}/{top}" for name, s in outcomes[0].judgement.criteria
        )
        head = f"judge scored {_number(score)} ({parts}; {bar})"
    else:
        written = outcomes[0].judgement.score
        clamped = (
            f"it wrote {_number(written.given)}, outside 0..{top}; "
            if written is not None and written.weighted is None and written.given != written.value
            else ""
        )
        head = f"judge scored {_number(score * top)}/{top} ({clamped}{_number(score)}, {bar})"
    first = outcomes[0].judgement
    reasoning = first.score.reasoning if first.score is not None else first.reasoning
    reasoning = " ".join(reasoning.split())
    if not reasoning:
        return head
    if len(reasoning) > REASONING_SHOWN:
        reasoning = reasoning[: REASONING_SHOWN - 1] + "…"
    return f"{head}: {reasoning}"
