"""The report model: what a run produced, case by case, and its summary.

The runner grades cases into `CaseReport` / `TurnReport` / `ResultRecord`; the report writers
and `--resume` read those. Plain, frozen data."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from gradekit._frozen import thaw
from gradekit._types import GradeResult

__all__ = [
    "CaseReport",
    "GraderSummary",
    "ResultRecord",
    "SuiteReport",
    "Summary",
    "SummaryBuilder",
    "TurnReport",
    "case_report",
    "count_result",
    "result_record",
    "turn_report",
]


@attrs.frozen
class ResultRecord:
    """One grader's result on one turn, with the entry keys the verdict needs."""

    result: GradeResult
    advisory: bool = False
    weight: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in reports (the `results` items of DESIGN.md)."""
        r = self.result
        return {
            "kind": r.kind,
            "name": r.name,
            "passed": r.passed,
            "score": r.score,
            "message": r.message,
            "details": thaw(r.details) if r.details is not None else None,
            "error": r.error,
            "advisory": self.advisory,
            "weight": self.weight,
            "duration_ms": r.duration_ms,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResultRecord:
        """Rebuild a record from its JSON form (for `--resume`)."""
        result = GradeResult(
            kind=data["kind"],
            name=data["name"],
            passed=data["passed"],
            score=data["score"],
            message=data.get("message", ""),
            details=data.get("details"),
            error=data.get("error"),
            duration_ms=data.get("duration_ms", 0.0),
        )
        return cls(result, advisory=data.get("advisory", False), weight=data.get("weight", 1.0))


@attrs.frozen
class TurnReport:
    """A graded turn. `errored` when a non-advisory result has an error; `skipped` when an
    earlier error ended the case (`fail_on_error`) before this turn ran."""

    index: int
    passed: bool
    score: float
    results: tuple[ResultRecord, ...] = ()
    errored: bool = False
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in reports."""
        data: dict[str, Any] = {
            "index": self.index,
            "passed": self.passed,
            "score": self.score,
            "errored": self.errored,
            "results": [record.to_dict() for record in self.results],
        }
        if self.skipped:
            data["skipped"] = True
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnReport:
        """Rebuild from the JSON form."""
        return cls(
            index=data["index"],
            passed=data["passed"],
            score=data["score"],
            results=tuple(ResultRecord.from_dict(item) for item in data.get("results", ())),
            errored=data.get("errored", False),
            skipped=data.get("skipped", False),
        )


@attrs.frozen
class CaseReport:
    """A graded case. `outcome` is `pass`, `fail` or `error`; the three are disjoint."""

    name: str
    passed: bool
    score: float
    turns: tuple[TurnReport, ...] = ()
    errored: bool = False
    error: str | None = None
    duration_ms: float = 0.0

    @property
    def outcome(self) -> str:
        """`"error"` when any turn errored or the case could not load; else pass or fail."""
        if self.errored or self.error is not None:
            return "error"
        return "pass" if self.passed else "fail"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in reports and in the `--resume` stream."""
        data: dict[str, Any] = {
            "name": self.name,
            "passed": self.passed,
            "score": self.score,
            "errored": self.errored,
            "duration_ms": self.duration_ms,
            "turns": [turn.to_dict() for turn in self.turns],
        }
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseReport:
        """Rebuild from the JSON form."""
        return cls(
            name=data["name"],
            passed=data["passed"],
            score=data["score"],
            turns=tuple(TurnReport.from_dict(item) for item in data.get("turns", ())),
            errored=data.get("errored", False),
            error=data.get("error"),
            duration_ms=data.get("duration_ms", 0.0),
        )


_new = object.__new__


def _setters(cls: type, *names: str) -> tuple[Callable[[object, Any], None], ...]:
    return tuple(cls.__dict__[name].__set__ for name in names)


_RECORD = _setters(ResultRecord, "result", "advisory", "weight")


_TURN = _setters(TurnReport, "index", "passed", "score", "results", "errored", "skipped")


_CASE = _setters(CaseReport, "name", "passed", "score", "turns", "errored", "error", "duration_ms")


def result_record(result: GradeResult, advisory: bool, weight: float) -> ResultRecord:
    """`ResultRecord(result, advisory, weight)`, cheaper."""
    record: ResultRecord = _new(ResultRecord)
    set_result, set_advisory, set_weight = _RECORD
    set_result(record, result)
    set_advisory(record, advisory)
    set_weight(record, weight)
    return record


def turn_report(  # noqa: PLR0917 - positional like the class: called once per turn
    index: int,
    passed: bool,
    score: float,
    results: tuple[ResultRecord, ...],
    errored: bool,
    skipped: bool = False,
) -> TurnReport:
    """`TurnReport(index, passed, score, results, errored, skipped)`, cheaper."""
    turn: TurnReport = _new(TurnReport)
    set_index, set_passed, set_score, set_results, set_errored, set_skipped = _TURN
    set_index(turn, index)
    set_passed(turn, passed)
    set_score(turn, score)
    set_results(turn, results)
    set_errored(turn, errored)
    set_skipped(turn, skipped)
    return turn


def case_report(  # noqa: PLR0917 - positional like the class: called once per case
    name: str,
    passed: bool,
    score: float,
    turns: Sequence[TurnReport],
    errored: bool,
    error: str | None,
    duration_ms: float,
) -> CaseReport:
    """`CaseReport(name, passed, score, tuple(turns), errored, error, duration_ms)`, cheaper."""
    case: CaseReport = _new(CaseReport)
    set_name, set_passed, set_score, set_turns, set_errored, set_error, set_duration = _CASE
    set_name(case, name)
    set_passed(case, passed)
    set_score(case, score)
    set_turns(case, tuple(turns))
    set_errored(case, errored)
    set_error(case, error)
    set_duration(case, duration_ms)
    return case


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
    """Counts for a run: cases passed / failed / errored (disjoint) and per grader name.

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
        self._counts = {"pass": 0, "fail": 0, "error": 0}
        self._graders: dict[str, list[Any]] = {}

    def add(self, case: CaseReport) -> None:
        """Count one finished case."""
        self._counts[case.outcome] += 1
        for turn in case.turns:
            for record in turn.results:
                count_result(self.slot(record.result.name), record.result)

    def slot(self, name: str) -> list[Any]:
        """The counts of grader `name`: [passed, failed, errored, total score], for
        `count_result` to update in place."""
        slot = self._graders.get(name)
        if slot is None:
            slot = self._graders[name] = [0, 0, 0, 0.0]
        return slot

    def count_case(self, outcome: str) -> None:
        """Count a case by its outcome alone; its results are counted with `count_result`."""
        self._counts[outcome] += 1

    def merge(self, other: SummaryBuilder) -> None:
        """Count every case `other` counted."""
        for outcome, count in other._counts.items():
            self._counts[outcome] += count
        for name, (p, f, e, total) in other._graders.items():
            slot = self._graders.get(name)
            if slot is None:
                self._graders[name] = [p, f, e, total]
            else:
                slot[0] += p
                slot[1] += f
                slot[2] += e
                slot[3] += total

    def build(self) -> Summary:
        """The summary of every case added so far."""
        counts = self._counts
        graders = {
            name: GraderSummary(p, f, e, (total / (p + f)) if p + f else None)
            for name, (p, f, e, total) in sorted(self._graders.items())
        }
        cases = sum(counts.values())
        return Summary(
            cases=cases,
            passed=counts["pass"],
            failed=counts["fail"],
            errored=counts["error"],
            pass_rate=counts["pass"] / cases if cases else None,
            graders=graders,
        )


def count_result(slot: list[Any], result: GradeResult) -> None:
    """Count one result in its grader's slot (see `SummaryBuilder.slot`): errored apart, and
    only the scores of results that are not errored."""
    if result.error is not None:
        slot[2] += 1
    else:
        slot[0 if result.passed else 1] += 1
        slot[3] += result.score


@attrs.frozen
class SuiteReport:
    """The result of a run. `complete` is False when the run was interrupted.

    `cases` holds the case reports in the suite's order, unless the run was asked not to keep
    them (a run of millions of cases streams them to `on_case` and a JSONL file instead); then
    `summary` is still exact, because it was accumulated as the cases finished.
    """

    suite: str
    cases: tuple[CaseReport, ...]
    complete: bool = True
    duration_ms: float = 0.0
    stored_summary: Summary | None = None

    @property
    def summary(self) -> Summary:
        """Counts over every case of the run."""
        if self.stored_summary is not None:
            return self.stored_summary
        return Summary.of(self.cases)

    @property
    def passed(self) -> bool:
        """The suite passes when the run completed and every case passed."""
        summary = self.summary
        return self.complete and summary.passed == summary.cases

    def to_dict(self) -> dict[str, Any]:
        """The JSON report of DESIGN.md."""
        return {
            "suite": self.suite,
            "passed": self.passed,
            "complete": self.complete,
            "duration_ms": self.duration_ms,
            "summary": self.summary.to_dict(),
            "cases": [case.to_dict() for case in self.cases],
        }
