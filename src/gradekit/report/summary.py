"""A run's summary: the tri-state outcome of a case, the counts per grader and over the run
(with pass@k of cases with several attempts) with their intervals, and the builder that
counts them as cases end, so a run of millions of cases need not keep every case report to
count them."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from gradekit.core.types import GradeResult
from gradekit.core.values import ExactSum
from gradekit.report.attempts import (
    DEFAULT_CONFIDENCE,
    AttemptTally,
    CountedCase,
    PassAtK,
    check_confidence,
    clustered_interval,
    wilson_interval,
    z_value,
)

__all__ = [
    "GraderCounts",
    "GraderSummary",
    "Outcome",
    "Summary",
    "SummaryBuilder",
    "outcome_of",
]


Outcome = Literal["pass", "fail", "error"]
"""The tri-state outcome of a result or a case."""


def outcome_of(passed: bool, errored: bool) -> Outcome:
    """A case's outcome from its verdict: errored cases are neither passed nor failed."""
    if errored:
        return "error"
    return "pass" if passed else "fail"


Interval = tuple[float, float]


@attrs.frozen
class GraderSummary:
    """Counts for one grader name across the run; mean_score excludes errored results.

    `mean_score_interval`: the interval of `mean_score` at the summary's `interval_level`:
    the Wilson interval over the results (the sum of their scores out of their number) when
    no case has several attempts; else the mean ± z times its standard error clustered by case
    (the attempts of a case are one cluster). None without a scored result."""

    passed: int = 0
    failed: int = 0
    errored: int = 0
    mean_score: float | None = None
    mean_score_interval: Interval | None = None
    spread: float | None = attrs.field(default=None, repr=False, eq=False)
    """Σ over clusters of (their scores' sum - their number * mean)², when clustered (None:
    the Wilson interval): what the interval is recomputed from at another level."""

    def at_level(self, confidence: float) -> GraderSummary:
        """The same counts with `mean_score_interval` at `confidence`."""
        return attrs.evolve(
            self, mean_score_interval=_score_interval(self, self.spread, confidence)
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: an item of the report's `summary.graders`."""
        interval = self.mean_score_interval
        return {
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "mean_score": self.mean_score,
            "mean_score_interval": None if interval is None else list(interval),
        }

    @property
    def pass_rate(self) -> float | None:
        """Passed / every result of this grader (errored ones included); None when none."""
        total = self.passed + self.failed + self.errored
        return self.passed / total if total else None


def _score_interval(
    grader: GraderSummary, spread: float | None, confidence: float
) -> Interval | None:
    scored = grader.passed + grader.failed
    mean = grader.mean_score
    if not scored or mean is None:
        return None
    if spread is None:
        return wilson_interval(mean * scored, scored, confidence)
    half = z_value(confidence) * math.sqrt(max(spread, 0.0)) / scored
    return (min(max(mean - half, 0.0), 1.0), min(max(mean + half, 0.0), 1.0))


@attrs.frozen
class Summary:
    """Counts for a run: cases passed / failed / errored (disjoint), per grader, pass@k.

    `pass_rate` is passed / all cases: an errored case is not a failure (it is counted apart),
    but it is not a pass either; None when there is no case. `graded_pass_rate` is the rate
    over the cases that were graded (passed / (passed + failed)), shown beside it, labelled.
    """

    cases: int
    passed: int
    failed: int
    errored: int
    pass_rate: float | None
    graders: Mapping[str, GraderSummary]
    judge: Mapping[str, int] | None = None
    """What the run's LLM judge calls cost (the `prompt` kind); None when none ran. Set by
    `run_suite` from the run context's judge figures (see gradekit.core.context)."""
    pass_at_k: PassAtK | None = None
    interval_level: float = DEFAULT_CONFIDENCE
    """The level of every interval of the summary (`Statistics(confidence=...)`)."""

    @property
    def pass_rate_interval(self) -> Interval | None:
        """The interval of `pass_rate` at `interval_level`: the Wilson interval over the cases
        when each was graded once; with several attempts of a case, the mean over every
        attempt ± z times the standard error clustered by case (`gradekit.report.attempts`).
        None when there is no case."""
        if not self.cases:
            return None
        attempts = self.pass_at_k
        if attempts is None:
            return wilson_interval(self.passed, self.cases, self.interval_level)
        groups = attempts.groups
        single = self.cases - sum(group.attempts for group in groups)
        single_passed = self.passed - sum(group.passed for group in groups)
        clusters = itertools.chain(
            ((group.passed, group.attempts) for group in groups),
            itertools.repeat((1, 1), single_passed),
            itertools.repeat((0, 1), single - single_passed),
        )
        return clustered_interval(clusters, self.interval_level)

    def at_level(self, confidence: float) -> Summary:
        """The same summary with its intervals at `confidence` (0 to 1, exclusive)."""
        confidence = check_confidence(confidence)
        return attrs.evolve(
            self,
            graders={name: g.at_level(confidence) for name, g in self.graders.items()},
            pass_at_k=None
            if self.pass_at_k is None
            else attrs.evolve(self.pass_at_k, interval_level=confidence),
            interval_level=confidence,
        )

    @classmethod
    def of(cls, cases: Iterable[CountedCase], confidence: float = DEFAULT_CONFIDENCE) -> Summary:
        """Summarise case reports (advisory results count in the per-grader figures), the
        intervals at `confidence`."""
        builder = SummaryBuilder()
        for case in cases:
            builder.add(case)
        return builder.build(confidence=confidence)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of DESIGN.md's `summary`."""
        return {
            "cases": self.cases,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "pass_rate": self.pass_rate,
            "pass_rate_interval": _listed(self.pass_rate_interval),
            "interval_level": self.interval_level,
            "graders": {name: g.to_dict() for name, g in self.graders.items()},
            **({} if self.judge is None else {"judge": dict(self.judge)}),
            **({} if self.pass_at_k is None else {"pass_at_k": self.pass_at_k.to_dict()}),
        }

    @property
    def graded_pass_rate(self) -> float | None:
        """Passed / (passed + failed): the rate over the cases that were graded without error."""
        decided = self.passed + self.failed
        return self.passed / decided if decided else None


def _listed(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


class GraderCounts:
    """One grader name's counts while a summary accumulates (see `SummaryBuilder.counters`).

    Scores of 1 are counted as a whole number and the others summed exactly (`ExactSum`), so
    that the mean and its interval do not depend on the order the results came in."""

    __slots__ = ("errored", "failed", "ones", "passed", "squares", "sums")

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.errored = 0
        self.ones = 0
        """How many results that are not errored scored 1."""
        self.sums = ExactSum()
        """The sum of the other scores of the results that are not errored."""
        self.squares = ExactSum()
        """The sum of their squares (for the interval of their mean)."""

    def add_score(self, score: float) -> None:
        """Count one score of a result that is not errored."""
        if score == 1.0:
            self.ones += 1
        elif score:
            self.sums.add(score)
            self.squares.add(score * score)

    @property
    def score_sum(self) -> float:
        """The sum of the scores of the results that are not errored."""
        return self.sums.value(self.ones)

    @property
    def score_squares(self) -> float:
        """The sum of their squares."""
        return self.squares.value(self.ones)


class SummaryBuilder:
    """Accumulates a Summary one case at a time, so a run of millions of cases need not keep
    every case report in memory to count them."""

    def __init__(self) -> None:
        # Cases by verdict, [errored][passed]: `build` names their outcomes (`outcome_of`).
        self._verdicts = [[0, 0], [0, 0]]
        self._graders: dict[str, GraderCounts] = {}
        self.attempts = AttemptTally()

    def add(self, case: CountedCase) -> None:
        """Count one finished case and its results."""
        self.count_case(case.passed, case.errored or case.error is not None)
        self.attempts.add(case)
        for turn in case.turns:
            self.count_results([record.result for record in turn.results])

    def count_case(self, passed: bool, errored: bool) -> None:
        """Count a case by its verdict alone; its results are counted with `count_results`
        (a runner that builds no report counts as it grades)."""
        self._verdicts[errored][passed] += 1

    def counters(self, names: Iterable[str]) -> list[GraderCounts]:
        """The counts of each grader name, in order, for `count_results` (a caller counting
        the results of the same graders again and again looks them up once)."""
        graders = self._graders
        found = []
        for name in names:
            counts = graders.get(name)
            if counts is None:
                counts = graders[name] = GraderCounts()
            found.append(counts)
        return found

    def count_results(
        self,
        results: Sequence[GradeResult],
        counters: Sequence[GraderCounts] | None = None,
        times: int = 1,
    ) -> None:
        """Count results under their grader's name, `times` over: errored ones apart, and only
        the scores of the results that are not errored. `counters`: `counters(names of the
        results)`. Reads of each result only whether it errored, passed, and its score."""
        if counters is None:
            counters = self.counters(result.name for result in results)
        # Not `strict=True`: its check costs as much as this loop; the lengths match by design.
        for result, counts in zip(results, counters):  # noqa: B905
            if result.error is not None:
                counts.errored += times
                continue
            if result.passed:
                counts.passed += times
            else:
                counts.failed += times
            score = result.score
            if score == 1.0:  # most scores: counted, not summed (see GraderCounts)
                counts.ones += times
            elif score:
                for _ in range(times):
                    counts.add_score(score)

    def merge(self, other: SummaryBuilder) -> None:
        """Count every case `other` counted."""
        for errored in (False, True):
            for passed in (False, True):
                self._verdicts[errored][passed] += other._verdicts[errored][passed]
        self.attempts.merge(other.attempts)
        for counts, theirs in zip(
            self.counters(other._graders), other._graders.values(), strict=True
        ):
            counts.passed += theirs.passed
            counts.failed += theirs.failed
            counts.errored += theirs.errored
            counts.ones += theirs.ones
            counts.sums.merge(theirs.sums)
            counts.squares.merge(theirs.squares)

    def build(
        self, ks: Sequence[int] | None = None, confidence: float = DEFAULT_CONFIDENCE
    ) -> Summary:
        """The summary of every case added so far; pass@k at `ks` (None: the default); the
        intervals at `confidence`."""
        cases = {"pass": 0, "fail": 0, "error": 0}
        for errored in (False, True):
            for passed in (False, True):
                cases[outcome_of(passed, errored)] += self._verdicts[errored][passed]
        clustered = len(self.attempts) > 0
        graders = {}
        for name, c in sorted(self._graders.items()):
            scored = c.passed + c.failed
            mean = c.score_sum / scored if scored else None
            spread = self._spread(name, c, mean) if clustered and mean is not None else None
            grader = GraderSummary(c.passed, c.failed, c.errored, mean, None, spread)
            graders[name] = grader.at_level(confidence)
        total = sum(cases.values())
        return Summary(
            cases=total,
            passed=cases["pass"],
            failed=cases["fail"],
            errored=cases["error"],
            pass_rate=cases["pass"] / total if total else None,
            graders=graders,
            pass_at_k=self.attempts.result(ks, confidence),
            interval_level=confidence,
        )

    def _spread(self, name: str, counts: GraderCounts, mean: float) -> float:
        """Σ over clusters of (sum - number * mean)² of grader `name`'s scores: each case of
        several attempts one cluster, every other result one of its own. Summed exactly, in
        no order (see `GraderCounts`)."""
        clusters = self.attempts.clusters(name)
        terms = [(total - n * mean) ** 2 for total, n, _ in clusters]
        rest_n = counts.passed + counts.failed - sum(n for _, n, _ in clusters)
        if rest_n > 0:
            rest_sum = counts.sums.value(counts.ones, *(-total for total, _, _ in clusters))
            rest_squares = counts.squares.value(
                counts.ones, *(-squares for _, _, squares in clusters)
            )
            terms.append(max(rest_squares - 2.0 * mean * rest_sum + rest_n * mean * mean, 0.0))
        return math.fsum(terms)
