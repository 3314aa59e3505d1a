"""One judge call and one grade's result.

`ask`: the reply to one request, from the run's cache if it holds it, else over HTTP, with
structured output where the server takes it and plain text where it refuses, counted in the
run's statistics. `judged_result`: from judgements to a result: per-sample normalised scores,
the aggregate over samples, the verdict, and the message and details a person and a tool read.

Imports the core, `shared`, `client`, `providers`, `reply` and `text`.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any, Final, Protocol

import attrs

from gradekit.core.errors import JudgeError, JudgeHTTPError
from gradekit.core.types import GradeResult
from gradekit.core.values import reaches
from gradekit.graders.prompt.client import (
    Connection,
    HttpRequest,
    UnusableKey,
    api_key,
    post_json,
)
from gradekit.graders.prompt.providers import JudgeRequest, Reply, headers, read_reply, wire_body
from gradekit.graders.prompt.reply import Judgement, Score
from gradekit.graders.prompt.shared import JudgeRun, ReplyCache, cache_key
from gradekit.graders.prompt.text import Criterion

__all__ = ["REFUSAL_STATUSES", "Asked", "Judged", "SampleOutcome", "ask", "judged_result"]

REFUSAL_STATUSES = frozenset({400, 422})
"""What a server answers to a `response_format` it does not take (vLLM, older Ollama...)."""

REASONING_SHOWN: Final = 160
"""Characters of the judge's reasoning quoted in a message."""


@attrs.frozen
class Asked:
    """A reply, whether it came from the cache, and its cache key (to store it once it gave
    a judgement; empty when the run keeps no cache)."""

    reply: Reply
    cached: bool
    key: str


async def ask(
    request: JudgeRequest,
    connection: Connection,
    run: JudgeRun,
    cache: ReplyCache | None,
    deadline: float,
) -> Asked:
    """The reply to `request`, counted in `run`'s statistics. Raises JudgeError (counted as
    a failed call)."""
    key = "" if cache is None else cache_key(request.key_material())
    if cache is not None:
        stored = cache.get(key)
        if stored is not None:
            run.count(cached=1)
            return Asked(stored, True, key)
    run.count(calls=1)
    try:
        reply = await _send(request, connection, run, deadline)
    except JudgeError:
        run.count(errors=1)
        raise
    run.count(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens)
    return Asked(reply, False, key)


async def _send(
    request: JudgeRequest, connection: Connection, run: JudgeRun, deadline: float
) -> Reply:
    try:
        secret = api_key(connection.key_env)
    except UnusableKey as error:
        raise JudgeError(str(error)) from None
    if secret is None and connection.key_required:
        raise JudgeError(
            f"the environment variable {connection.key_env} is not set (it was when the suite "
            "was loaded); set it to the API key"
        )
    hint = f"the API key in ${connection.key_env}"
    send_headers = headers(request.provider, secret)
    memo = (connection.url, request.model)
    structured = request.schema is not None and memo not in run.plain_only

    def http(structured: bool) -> HttpRequest:
        body = wire_body(request, structured=structured)
        return HttpRequest(connection.url, body, send_headers, secret, hint)

    try:
        data = await post_json(
            http(structured), deadline=deadline, policy=connection.policy, run=run
        )
    except JudgeHTTPError as error:
        if not (structured and request.provider == "openai" and error.status in REFUSAL_STATUSES):
            raise
        data = await post_json(http(False), deadline=deadline, policy=connection.policy, run=run)
        run.remember_plain(*memo)
    return read_reply(request.provider, data, connection.url)


class Judged(Protocol):
    """What `judged_result` reads of a prompt grader (its options)."""

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def judge_provider(self) -> str: ...
    @property
    def scoring(self) -> str: ...
    @property
    def max_score(self) -> int: ...
    @property
    def threshold(self) -> float: ...
    @property
    def aggregate(self) -> str: ...


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
    grader: Judged, criteria: Sequence[Criterion], outcomes: Sequence[SampleOutcome]
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
    grader: Judged, criteria: Sequence[Criterion], outcomes: Sequence[SampleOutcome]
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
    grader: Judged,
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
