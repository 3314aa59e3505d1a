"""The verdict rules, implemented once: how results combine into a turn's, a case's or a
composite grader's verdict.

Results are tri-state (pass, fail, error). An error is never counted as a failure, and no
negation or threshold turns it into a pass. An errored result makes a combination an error only
when it could change the verdict: `any` with a passing result passes whatever the errored
results would have been. Advisory results are reported but take no part in any verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Literal

import attrs

from gradekit._model import Policy, ResultRecord, TurnReport

__all__ = [
    "DEFAULT_THRESHOLD",
    "Verdict",
    "Vote",
    "case_verdict",
    "combine",
    "negate",
    "turn_verdict",
    "votes_of",
]

Outcome = Literal["pass", "fail", "error"]
Mode = Literal["all", "any", "weighted", "at_least"]

DEFAULT_THRESHOLD: Final = 0.5
"""The threshold of `weighted` when none is given."""

Vote = tuple[str, float, float, bool]
"""One result as the rules see it: (outcome, score, weight, advisory)."""


@attrs.frozen
class Verdict:
    """The outcome of a combination and its score.

    `score` is the weighted mean of the non-advisory, non-errored scores (errored results have
    no score to average), or None when there is no such score.
    """

    outcome: Outcome
    score: float | None

    @property
    def passed(self) -> bool:
        """True for a pass (an error is not a pass)."""
        return self.outcome == "pass"

    def score_or_default(self) -> float:
        """The score, or 1.0 / 0.0 for a pass / anything else when nothing was scored."""
        if self.score is not None:
            return self.score
        return 1.0 if self.outcome == "pass" else 0.0


def combine(
    votes: Iterable[Vote],
    mode: str,
    *,
    threshold: float | None = None,
    count: int | None = None,
) -> Verdict:
    """Combine votes under `mode`: `all`, `any`, `weighted` (mean >= threshold) or `at_least`
    (at least `count` pass).

    Advisory votes are ignored. With no non-advisory vote the combination passes (a turn with
    only advisory results passes). Weights are relative; when they are all zero, every vote
    counts equally.
    """
    decided: list[tuple[bool, float, float]] = []
    errored_weight = 0.0
    errored = 0
    for outcome, score, weight, advisory in votes:
        if advisory:
            continue
        if outcome == "error":
            errored += 1
            errored_weight += weight
        else:
            decided.append((outcome == "pass", score, weight))
    total_weight = errored_weight + sum(weight for _, _, weight in decided)
    if total_weight <= 0.0:
        # All weights zero: equal weights, so the mean is still defined.
        decided = [(ok, score, 1.0) for ok, score, _ in decided]
        errored_weight = float(errored)
        total_weight = errored_weight + len(decided)
    mean = _mean(decided)
    if not decided:
        # Nothing scored: vacuously a pass with no results, but never a pass made of errors
        # (a `weighted` with threshold 0 would otherwise pass on errors alone).
        return Verdict("error" if errored else "pass", None)
    passes = sum(1 for ok, _, _ in decided if ok)
    fails = len(decided) - passes
    if mode == "all":
        outcome = _decide(fails == 0 and errored == 0, fails == 0)
    elif mode == "any":
        outcome = _decide(passes > 0, passes > 0 or errored > 0)
    elif mode == "at_least":
        need = 1 if count is None else count
        outcome = _decide(passes >= need, passes + errored >= need)
    elif mode == "weighted":
        limit = DEFAULT_THRESHOLD if threshold is None else threshold
        # The errored results could score anything in [0, 1]: decided only if every value
        # they could take gives the same verdict. Same arithmetic as `_mean`, so with no
        # errored result the verdict agrees exactly with the reported score.
        lowest = sum((weight / total_weight) * score for _, score, weight in decided)
        highest = lowest + errored_weight / total_weight
        outcome = _decide(lowest >= limit, highest >= limit)
    else:
        raise ValueError(f"unknown policy mode {mode!r}; use all, any, weighted or at_least")
    return Verdict(outcome, mean)


def _decide(surely_passes: bool, may_pass: bool) -> Outcome:
    if surely_passes:
        return "pass"
    return "error" if may_pass else "fail"


def _mean(decided: Sequence[tuple[bool, float, float]]) -> float | None:
    weight = sum(w for _, _, w in decided)
    if weight <= 0.0:
        if not decided:
            return None
        return min(1.0, sum(score for _, score, _ in decided) / len(decided))
    # Normalising each weight first keeps a single vote's score exact.
    return min(1.0, sum((w / weight) * score for _, score, w in decided))


def negate(verdict: Verdict) -> Verdict:
    """`not`: a pass becomes a fail and a fail a pass; an error stays an error."""
    if verdict.outcome == "error":
        return verdict
    score = None if verdict.score is None else 1.0 - verdict.score
    return Verdict("fail" if verdict.outcome == "pass" else "pass", score)


def votes_of(records: Iterable[ResultRecord]) -> list[Vote]:
    """The votes of result records."""
    return [(r.result.outcome, r.result.score, r.weight, r.advisory) for r in records]


def turn_verdict(records: Sequence[ResultRecord], policy: Policy) -> tuple[bool, float, bool]:
    """A turn's (passed, score, errored): the policy over its non-advisory results.

    `errored` is true when any non-advisory result has an error (the case then counts as
    errored, apart from passed and failed cases).
    """
    errored = False
    for record in records:
        if record.result.error is not None and not record.advisory:
            errored = True
            break
    verdict = combine(votes_of(records), policy.mode, threshold=policy.threshold)
    return verdict.passed, verdict.score_or_default(), errored


def case_verdict(turns: Sequence[TurnReport], *, ended: bool = False) -> tuple[bool, float, bool]:
    """A case's (passed, score, errored): it passes when every turn passes; it is errored when
    any turn errored or an error ended it early (`ended`, with later turns skipped).

    The score is the mean of the scores of the turns that ran.
    """
    ran = [turn for turn in turns if not turn.skipped]
    passed = not ended and all(turn.passed for turn in ran)
    errored = ended or any(turn.errored for turn in ran)
    score = sum(turn.score for turn in ran) / len(ran) if ran else float(passed)
    return passed, min(1.0, score), errored
