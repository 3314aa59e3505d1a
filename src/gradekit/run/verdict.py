"""What a grade gives back and how results combine, each rule implemented once.

**The verdict rules**: how results combine into a turn's, a case's or a
composite grader's verdict. Every way of grading calls them: one case at a time
(`gradekit.run.grade`), batches of inline cases (`gradekit.run.lanes`) and the composite kinds.

Results are tri-state (pass, fail, error). An error is never counted as a failure, and no
negation or threshold turns it into a pass. An errored result makes a combination an error only
when it could change the verdict: `any` with a passing result passes whatever the errored
results would have been. Advisory results are reported but take no part in any verdict.

**What a grade gives back**: the checks on what a grader returned, error and timeout results,
and the record of a grade (its result and how long it took).

One function, `finish`, holds the rules every path applies to a grader's return value. The
runner never changes what a grader returned: what it measures (the duration) goes on the
`ResultRecord` it makes, and a result it must correct (the entry's threshold, kind or name) is
a new one."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple, Protocol

from gradekit.core.types import GradeResult, Sample, error_text
from gradekit.core.values import json_problem, plain_json, reaches
from gradekit.registry.entries import GraderEntry
from gradekit.report.model import Outcome, ResultRecord
from gradekit.run.exits import GRADER_RAISES, is_ctrl_c
from gradekit.suite.model import Policy

__all__ = [
    "DEFAULT_THRESHOLD",
    "Decision",
    "EntryKeys",
    "Tally",
    "Verdict",
    "call_sync",
    "case_decision",
    "combine",
    "error_result",
    "finish",
    "is_final",
    "negate",
    "record_of",
    "tally",
    "timed_out",
    "timeout_result",
]


DEFAULT_THRESHOLD: Final = 0.5
"""The threshold of `weighted` when none is given."""


class EntryKeys(Protocol):
    """What the rules read of a result's entry (a `GraderEntry`)."""

    @property
    def advisory(self) -> bool:
        """Reported only: no part in any verdict."""
        ...

    @property
    def weight(self) -> float:
        """The result's relative weight in a mean."""
        ...

    @property
    def fail_on_error(self) -> bool:
        """An error of this entry ends its case."""
        ...


class Verdict(NamedTuple):
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


class Decision(NamedTuple):
    """What a turn or a case is decided to be: the `passed`, `score` and `errored` of its
    report. `errored` is set when a non-advisory result errored (or an error ended the case),
    even when the policy passed anyway: the error is always reported. `ended`: an error of a
    `fail_on_error` entry ended the case there (its later turns are skipped)."""

    passed: bool
    score: float
    errored: bool
    ended: bool


class Tally(NamedTuple):
    """What the rules need of a combination's results, counted by `tally`."""

    passes: int
    fails: int
    errors: int
    decided_weight: float
    """The weight sum of the passed and failed results."""
    weighted_score_sum: float
    score_sum: float
    errored_weight: float
    """The weight sum of the errored results."""
    last_score: float
    """The score of the last passed or failed result (exact when it is the only one)."""
    ends_case: bool
    """An entry with `fail_on_error` errored (advisory or not): later turns are skipped."""

    def decide(
        self, mode: str, threshold: float | None = None, count: int | None = None
    ) -> Verdict:
        """The verdict under `mode`: `all`, `any`, `weighted` (mean >= threshold) or
        `at_least` (at least `count` pass).

        With no non-advisory result the combination passes (a turn with only advisory results
        passes), but a combination of errors only is an error. Weights are relative; when
        they are all zero, every result counts equally.
        """
        passes, fails, errors = self.passes, self.fails, self.errors
        decided = passes + fails
        if not decided:
            # Nothing scored: vacuously a pass with no results, but never a pass made of errors
            # (a `weighted` with threshold 0 would otherwise pass on errors alone).
            return Verdict("error" if errors else "pass", None)
        weight_sum, weighted_sum = self.decided_weight, self.weighted_score_sum
        errored_weight = self.errored_weight
        if weight_sum + errored_weight <= 0.0:
            # All weights zero: equal weights, so the mean is still defined.
            weight_sum, weighted_sum = float(decided), self.score_sum
            errored_weight = float(errors)
        if decided == 1:
            mean = self.last_score  # exact: `all` over one grader is that grader
        elif weight_sum > 0.0:
            mean = min(1.0, weighted_sum / weight_sum)
        else:
            mean = min(1.0, self.score_sum / decided)
        outcome: Outcome
        if mode == "all":
            outcome = "fail" if fails else "error" if errors else "pass"
        elif mode == "any":
            outcome = _decide(passes > 0, passes > 0 or errors > 0)
        elif mode == "at_least":
            need = 1 if count is None else count
            outcome = _decide(passes >= need, passes + errors >= need)
        elif mode == "weighted":
            limit = DEFAULT_THRESHOLD if threshold is None else threshold
            if errors == 0:
                outcome = _decide(reaches(mean, limit), False)
            else:
                # The errored results could score anything in [0, 1]: decided only if every
                # value they could take gives the same verdict.
                total = weight_sum + errored_weight
                lowest = weighted_sum / total
                highest = (weighted_sum + errored_weight) / total
                outcome = _decide(reaches(lowest, limit), reaches(highest, limit))
        else:
            raise ValueError(f"unknown policy mode {mode!r}; use all, any, weighted or at_least")
        return Verdict(outcome, mean)

    def turn_decision(self, policy: Policy) -> Decision:
        """A turn's decision: its policy over its non-advisory results; errored when any of
        them errored."""
        verdict = self.decide(policy.mode, policy.threshold)
        return Decision(verdict.passed, verdict.score_or_default(), self.errors > 0, self.ends_case)


def _decide(surely_passes: bool, may_pass: bool) -> Outcome:
    if surely_passes:
        return "pass"
    return "error" if may_pass else "fail"


def tally(results: Iterable[GradeResult], entries: Iterable[EntryKeys]) -> Tally:
    """Count results, each beside its entry (same order), for the rules: advisory results take
    no part; errored ones are counted apart with their weight and no score; an error of a
    `fail_on_error` entry ends the case. Reads of each result only what `likeness` holds."""
    passes = fails = errors = 0
    decided_weight = weighted_score_sum = score_sum = errored_weight = last_score = 0.0
    ends_case = False
    # Not `strict=True`: its check costs as much as this loop; the lengths match by design.
    for result, entry in zip(results, entries):  # noqa: B905
        if result.error is not None:
            if entry.fail_on_error:
                ends_case = True
            if not entry.advisory:
                errors += 1
                errored_weight += entry.weight
            continue
        if entry.advisory:
            continue
        weight = entry.weight
        if result.passed:
            passes += 1
        else:
            fails += 1
        last_score = result.score
        decided_weight += weight
        weighted_score_sum += weight * last_score
        score_sum += last_score
    return Tally(
        passes,
        fails,
        errors,
        decided_weight,
        weighted_score_sum,
        score_sum,
        errored_weight,
        last_score,
        ends_case,
    )


def case_decision(ran: Sequence[Decision]) -> Decision:
    """A case's decision from the decisions of the turns that ran, in order (the turns after
    one that `ended` the case are skipped, and left out).

    It passes when every one passes; it is errored when any errored or an error ended it early.
    The score is the mean of the scores of the turns that ran.
    """
    if not ran:
        return Decision(True, 1.0, False, False)
    ended = ran[-1].ended
    if len(ran) == 1 and not ended:  # the common single-turn case: that turn's decision
        return ran[0]
    passed = not ended and all(turn.passed for turn in ran)
    score = min(1.0, sum(turn.score for turn in ran) / len(ran))
    return Decision(passed, score, ended or any(turn.errored for turn in ran), ended)


def combine(
    results: Sequence[GradeResult],
    entries: Sequence[EntryKeys],
    mode: str,
    *,
    threshold: float | None = None,
    count: int | None = None,
) -> Verdict:
    """The verdict of results, each beside its entry, under `mode` (see `Tally.decide`)."""
    return tally(results, entries).decide(mode, threshold, count)


def negate(verdict: Verdict) -> Verdict:
    """`not`: a pass becomes a fail and a fail a pass; an error stays an error."""
    if verdict.outcome == "error":
        return verdict
    score = None if verdict.score is None else 1.0 - verdict.score
    return Verdict("fail" if verdict.outcome == "pass" else "pass", score)


def timeout_result(entry: GraderEntry, seconds: float) -> GradeResult:
    """`TimeoutError: grader 'x' exceeded 5s`."""
    text = f"TimeoutError: grader '{entry.name}' exceeded {seconds:g}s"
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text)


def timed_out(entry: GraderEntry, seconds: float) -> ResultRecord:
    """The record of a grade that outlived its timeout of `seconds`."""
    return ResultRecord(timeout_result(entry, seconds), entry.advisory, entry.weight, seconds * 1e3)


def error_result(entry: GraderEntry, text: str) -> GradeResult:
    """The error result `text` of `entry`."""
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text)


def record_of(entry: GraderEntry, result: GradeResult, started: float) -> ResultRecord:
    """The record of `result`, a grade of `entry` started at `started` (perf_counter) and
    finished now."""
    duration = (time.perf_counter() - started) * 1000.0
    return ResultRecord(result, entry.advisory, entry.weight, duration)


def finish(entry: GraderEntry, value: Any, well_formed: bool = False) -> GradeResult:
    """Check what a grader returned and apply the entry to it.

    Not a GradeResult, a non-bool `passed`, or details that are not strict JSON give an error
    result. The entry's threshold decides `passed` (an error stays an error); kind and name are
    the entry's. `well_formed`: the grader vouches for the rest (see
    `gradekit.registry.registry.has_well_formed_results`), so only the threshold is applied.
    Returns `value` itself when nothing needs to change, else a new result.
    """
    if not well_formed:
        problem = _problem(entry, value)
        if problem is not None:
            return error_result(entry, problem)
    threshold = entry.threshold
    if (
        threshold is not None
        and value.error is None
        and (value.score >= threshold) is not value.passed
    ):
        return _with_entry(entry, value, not value.passed)
    if well_formed or (value.name == entry.name and value.kind == entry.kind):
        result: GradeResult = value
        return result
    return _with_entry(entry, value, value.passed)


def is_final(entry: GraderEntry, well_formed: bool) -> bool:
    """True when `finish(entry, value, well_formed)` is `value` for every value the grader can
    return: well-formed results and no threshold to apply (a caller may then skip the call)."""
    return well_formed and entry.threshold is None


def _with_entry(entry: GraderEntry, value: GradeResult, passed: bool) -> GradeResult:
    """A copy of `value` with the entry's kind and name and `passed`."""
    return GradeResult(
        entry.kind,
        entry.name,
        passed,
        value.score,
        value.message,
        value.details,
        value.error,
        value.duration_ms,
    )


def _problem(entry: GraderEntry, value: Any) -> str | None:
    """What is wrong with a grader's return value, as the text of its error result."""
    if not isinstance(value, GradeResult):
        return (
            f"TypeError: grader '{entry.name}' returned {type(value).__name__}, not "
            "GradeResult; return gradekit.GradeResult(kind, name, passed, score, ...)"
        )
    passed = value.passed
    if passed is not True and passed is not False:
        return (
            f"TypeError: grader '{entry.name}' returned passed={passed!r} "
            f"({type(passed).__name__}); set passed to True or False"
        )
    if value.details is not None and not plain_json(value.details):
        problem = json_problem(value.details)
        if problem is not None:
            cls, where = problem
            return (
                f"{cls}: grader '{entry.name}' returned details that are not JSON ({where}); "
                "details may hold only dict, list, str, int, float, bool and None"
            )
    return None


def call_sync(entry: GraderEntry, sample: Sample) -> ResultRecord:
    """Call a sync grader here and now and record its grade; an exception becomes an error
    result."""
    started = time.perf_counter()
    try:
        result = finish(entry, entry.grader.grade(sample))
    except GRADER_RAISES as error:
        if is_ctrl_c(error):
            raise
        result = error_result(entry, error_text(error))
    return record_of(entry, result, started)
