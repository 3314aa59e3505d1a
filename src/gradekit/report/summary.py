"""A run's summary: the tri-state outcome of a case, the counts per grader and over the run
(with pass@k of cases with several attempts), and the builder that counts them as cases end,
so a run of millions of cases need not keep every case report to count them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from gradekit._types import GradeResult
from gradekit.report._counts import GraderCounts
from gradekit.report.attempts import AttemptTally, PassAtK

if TYPE_CHECKING:
    from gradekit.report.model import CaseReport

__all__ = ["GraderSummary", "Outcome", "Summary", "SummaryBuilder", "outcome_of"]


Outcome = Literal["pass", "fail", "error"]
"""The tri-state outcome of a result or a case."""


def outcome_of(passed: bool, errored: bool) -> Outcome:
    """A case's outcome from its verdict: errored cases are neither passed nor failed."""
    if errored:
        return "error"
    return "pass" if passed else "fail"


@attrs.frozen
class GraderSummary:
    """Counts for one grader name across the run; mean_score excludes errored results."""

    passed: int = 0
    failed: int = 0
    errored: int = 0
    mean_score: float | None = None

    @property
    def pass_rate(self) -> float | None:
        """Passed / every result of this grader (errored ones included); None when none."""
        total = self.passed + self.failed + self.errored
        return self.passed / total if total else None


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
    the command line after the run, from gradekit.graders._judge.statistics()."""
    pass_at_k: PassAtK | None = None

    @classmethod
    def of(cls, cases: Iterable[CaseReport]) -> Summary:
        """Summarise case reports (advisory results count in the per-grader figures)."""
        builder = SummaryBuilder()
        for case in cases:
            builder.add(case)
        return builder.build()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of DESIGN.md's `summary`."""
        return {
            "cases": self.cases,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "pass_rate": self.pass_rate,
            "graders": {name: attrs.asdict(g) for name, g in self.graders.items()},
            **({} if self.judge is None else {"judge": dict(self.judge)}),
            **({} if self.pass_at_k is None else {"pass_at_k": self.pass_at_k.to_dict()}),
        }

    @property
    def graded_pass_rate(self) -> float | None:
        """Passed / (passed + failed): the rate over the cases that were graded without error."""
        decided = self.passed + self.failed
        return self.passed / decided if decided else None


class SummaryBuilder:
    """Accumulates a Summary one case at a time, so a run of millions of cases need not keep
    every case report in memory to count them."""

    def __init__(self) -> None:
        # Cases by verdict, [errored][passed]: `build` names their outcomes (`outcome_of`).
        self._verdicts = [[0, 0], [0, 0]]
        self._graders: dict[str, GraderCounts] = {}
        self.attempts = AttemptTally()

    def add(self, case: CaseReport) -> None:
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
            counts.score_sum += result.score * times

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
            counts.score_sum += theirs.score_sum

    def build(self, ks: Sequence[int] | None = None) -> Summary:
        """The summary of every case added so far; pass@k at `ks` (None: the default)."""
        cases = {"pass": 0, "fail": 0, "error": 0}
        for errored in (False, True):
            for passed in (False, True):
                cases[outcome_of(passed, errored)] += self._verdicts[errored][passed]
        graders = {
            name: GraderSummary(
                c.passed,
                c.failed,
                c.errored,
                c.score_sum / (c.passed + c.failed) if c.passed + c.failed else None,
            )
            for name, c in sorted(self._graders.items())
        }
        total = sum(cases.values())
        return Summary(
            cases=total,
            passed=cases["pass"],
            failed=cases["fail"],
            errored=cases["error"],
            pass_rate=cases["pass"] / total if total else None,
            graders=graders,
            pass_at_k=self.attempts.result(ks),
        )
