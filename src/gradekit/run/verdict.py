"""The verdict rules, implemented once: how results combine into a turn's, a case's or a
composite grader's verdict.

Results are tri-state (pass, fail, error). An error is never counted as a failure, and no
negation or threshold turns it into a pass. An errored result makes a combination an error only
when it could change the verdict: `any` with a passing result passes whatever the errored
results would have been. Advisory results are reported but take no part in any verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Literal, NamedTuple

from gradekit.report.model import ResultRecord, TurnReport
from gradekit.suite.model import Policy

__all__ = [
    "DEFAULT_THRESHOLD",
    "Tally",
    "Verdict",
    "Vote",
    "case_outcome",
    "case_verdict",
    "combine",
    "negate",
    "turn_outcome",
    "turn_verdict",
    "votes_of",
]

Outcome = Literal["pass", "fail", "error"]
Mode = Literal["all", "any", "weighted", "at_least"]

DEFAULT_THRESHOLD: Final = 0.5
"""The threshold of `weighted` when none is given."""

Vote = tuple[str, float, float, bool]
"""One result as the rules see it: (outcome, score, weight, advisory)."""


class Verdict(NamedTuple):
    """The outcome of a combination and its score.

    `score` is the weighted mean of the non-advisory, non-errored scores (errored results have
    no score to average), or None when there is no such score. (A named tuple: the runner
    makes one per turn, so it must be cheap.)
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
    passes = fails = errored = 0
    weight_sum = weighted_sum = plain_sum = errored_weight = 0.0
    last = 0.0
    for outcome, score, weight, advisory in votes:
        if advisory:
            continue
        if outcome == "error":
            errored += 1
            errored_weight += weight
            continue
        if outcome == "pass":
            passes += 1
        else:
            fails += 1
        weight_sum += weight
        weighted_sum += weight * score
        plain_sum += score
        last = score
    outcome, mean = _conclude(
        mode,
        threshold,
        count,
        (passes, fails, errored, weight_sum, weighted_sum, plain_sum, errored_weight, last),
    )
    return Verdict(outcome, mean)


Tally = tuple[int, int, int, float, float, float, float, float]
"""What the rules need of the votes: (passes, fails, errored, weight sum of the decided votes,
weighted score sum, plain score sum, weight sum of the errored votes, last decided score)."""


def _conclude(
    mode: str, threshold: float | None, count: int | None, tally: Tally
) -> tuple[Outcome, float | None]:
    """The verdict of tallied non-advisory votes: (outcome, mean score or None)."""
    passes, fails, errored, weight_sum, weighted_sum, plain_sum, errored_weight, last = tally
    decided = passes + fails
    if not decided:
        # Nothing scored: vacuously a pass with no results, but never a pass made of errors
        # (a `weighted` with threshold 0 would otherwise pass on errors alone).
        return ("error" if errored else "pass"), None
    if weight_sum + errored_weight <= 0.0:
        # All weights zero: equal weights, so the mean is still defined.
        weight_sum, weighted_sum, errored_weight = float(decided), plain_sum, float(errored)
    if decided == 1:
        mean = last  # exact: `all` over one grader is that grader
    elif weight_sum > 0.0:
        mean = min(1.0, weighted_sum / weight_sum)
    else:
        mean = min(1.0, plain_sum / decided)
    outcome: Outcome
    if mode == "all":  # `_decide(not fails and not errored, not fails)`, inline: once per turn
        outcome = "fail" if fails else "error" if errored else "pass"
    elif mode == "any":
        outcome = _decide(passes > 0, passes > 0 or errored > 0)
    elif mode == "at_least":
        need = 1 if count is None else count
        outcome = _decide(passes >= need, passes + errored >= need)
    elif mode == "weighted":
        limit = DEFAULT_THRESHOLD if threshold is None else threshold
        if errored == 0:
            outcome = _decide(mean >= limit, False)
        else:
            # The errored results could score anything in [0, 1]: decided only if every
            # value they could take gives the same verdict.
            total = weight_sum + errored_weight
            lowest = weighted_sum / total
            highest = (weighted_sum + errored_weight) / total
            outcome = _decide(lowest >= limit, highest >= limit)
    else:
        raise ValueError(f"unknown policy mode {mode!r}; use all, any, weighted or at_least")
    return outcome, mean


def _decide(surely_passes: bool, may_pass: bool) -> Outcome:
    if surely_passes:
        return "pass"
    return "error" if may_pass else "fail"


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
    verdict = combine(votes_of(records), policy.mode, threshold=policy.threshold)
    errored = any(not record.advisory and record.result.error is not None for record in records)
    return verdict.passed, verdict.score_or_default(), errored


def turn_outcome(policy: Policy, tally: Tally) -> tuple[bool, float, bool]:
    """`turn_verdict` from the tally of the turn's results (see `Tally`), which the batch
    runner keeps as it grades."""
    verdict = Verdict(*_conclude(policy.mode, policy.threshold, None, tally))
    return verdict.passed, verdict.score_or_default(), tally[2] > 0


def case_verdict(turns: Sequence[TurnReport], *, ended: bool = False) -> tuple[bool, float, bool]:
    """A case's (passed, score, errored) from its turn reports (see `case_outcome`)."""
    if len(turns) == 1 and not ended:  # the common single-turn case, kept cheap
        (turn,) = turns
        return turn.passed, turn.score, turn.errored
    ran = [turn for turn in turns if not turn.skipped]
    return case_outcome(
        all(turn.passed for turn in ran),
        any(turn.errored for turn in ran),
        sum(turn.score for turn in ran),
        len(ran),
        ended=ended,
    )


def case_outcome(
    all_passed: bool, any_errored: bool, score_sum: float, ran: int, *, ended: bool
) -> tuple[bool, float, bool]:
    """A case's (passed, score, errored) from the turns that ran: it passes when every one
    passes; it is errored when any errored or an error ended it early (`ended`, with later
    turns skipped). The score is the mean of the scores of the turns that ran."""
    passed = not ended and all_passed
    score = min(1.0, score_sum / ran) if ran else float(passed)
    return passed, score, ended or any_errored
