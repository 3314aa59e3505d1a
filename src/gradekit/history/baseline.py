"""A run's cases marked against a baseline run: `new`, `fixed`, `regressed` or `unchanged`.

`Baseline.load(run)` reads the baseline (a JSON report, a `--resume` log, a `SuiteReport` or
case reports, as `gradekit compare` does) and keeps each case's outcome and its graders'
scores (`case_scores.Seen`) by name (and attempt index, for one of several attempts), nothing
more. `baseline.mark(case)` is how a case of the new run compares with the case of the same
name and attempt (the rule of `gradekit compare`: `compare.mark_of`). A `BaselineTally` counts
the marks of a run's cases as they stream past, and keeps what each case scored; its `marks()`
is the `BaselineMarks` a `SuiteReport` carries (`report.baseline`), which every report shows,
with the paired `statistics` of the cases in both runs, per grader too: the figures of
`gradekit compare` on the same runs, by the same function (`case_scores.paired_case_statistics`).
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import attrs

from gradekit.history.case_scores import (
    CaseKey,
    ReadWatch,
    Seen,
    SeenReader,
    case_scores,
    data_scores,
    iter_seen,
    key_of_data,
    outcome_of_data,
    paired_case_statistics,
)
from gradekit.history.compare import Mark, Outcome, mark_of
from gradekit.history.statistics import PairedStatistics, verdict_line
from gradekit.report.attempts import DEFAULT_CONFIDENCE, case_label
from gradekit.report.json import line_reader
from gradekit.report.marks import MarkedCase
from gradekit.report.model import CaseReport
from gradekit.report.reading import Run

__all__ = [
    "MARKS",
    "MAX_NAMED",
    "Baseline",
    "BaselineMarks",
    "BaselineTally",
    "with_mark",
]

MARKS: Final[tuple[Mark, ...]] = ("regressed", "fixed", "new", "unchanged")
"""Every mark, in the order the reports list them (what got worse first)."""

MAX_NAMED = 1000
"""At most this many cases are named per mark (and of the removed); the counts stay exact."""


def with_mark(text: str, mark: str) -> str:
    """A case's JSON text (one object, no key `baseline` yet) with `mark` as its `baseline`."""
    return f'{text.rstrip()[:-1]}, "baseline": "{mark}"}}'


class _Outcomes(Mapping[CaseKey, Outcome]):
    """The outcome of each case of a baseline, read off what it keeps of each."""

    __slots__ = ("_cases",)

    def __init__(self, cases: Mapping[CaseKey, Seen]) -> None:
        self._cases = cases

    def __getitem__(self, key: CaseKey) -> Outcome:
        return self._cases[key].outcome

    def __iter__(self) -> Iterator[CaseKey]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)


@attrs.frozen
class Baseline:
    """A baseline run's cases by (name, attempt): each one's outcome and its graders' scores
    (`cases`). `source`: the file it was read from (`""` for report objects); `layouts`: the
    reader whose layouts its cases share (a run's cases graded alike share theirs with them)."""

    source: str
    cases: Mapping[CaseKey, Seen] = attrs.field(repr=False)
    layouts: SeenReader = attrs.field(factory=SeenReader, repr=False, eq=False)

    @property
    def outcomes(self) -> Mapping[CaseKey, Outcome]:
        """Each case's outcome, by (name, attempt), in the baseline's order."""
        return _Outcomes(self.cases)

    @classmethod
    def load(cls, run: Run | Baseline, watch: ReadWatch | None = None) -> Baseline:
        """Read `run` (see `gradekit.report.reading.read_run`); a file that is no report is a
        ConfigError naming it. In a resumed log holding a case twice, the last one counts.
        `watch`: the progress of reading a file."""
        if isinstance(run, Baseline):
            return run
        source = os.fspath(run) if isinstance(run, (str, os.PathLike)) else ""
        layouts = SeenReader()
        cases: dict[CaseKey, Seen] = {}
        for key, case in iter_seen(run, watch, layouts):
            cases.pop(key, None)  # a case read again keeps its place at the end
            cases[key] = case
        return cls(source, cases, layouts)

    def _outcome(self, key: CaseKey) -> Outcome | None:
        case = self.cases.get(key)
        return None if case is None else case.outcome

    def mark(self, case: MarkedCase) -> Mark:
        """How `case` compares with the baseline's case of the same name and attempt."""
        return mark_of(self._outcome((case.name, case.attempt)), case.outcome)  # type: ignore[arg-type]

    def mark_data(self, data: Mapping[str, Any]) -> Mark:
        """`mark` of a case's JSON form."""
        return mark_of(self._outcome(key_of_data(data)), outcome_of_data(data))

    def tally(self) -> BaselineTally:
        """A fresh count of the marks of a run's cases."""
        return BaselineTally(self)


@attrs.frozen
class BaselineMarks:
    """How a run compares with its baseline: the cases of each mark (counts, and the first
    `MAX_NAMED` names of each, in suite order), the baseline's cases the run does not have
    (`removed`), and among `unchanged` those that did not pass either time (`still_failing`).
    `mark(case)` marks any case of the run. What the report model carries as its `baseline`
    (`gradekit.report.marks.Marks`)."""

    baseline: Baseline
    counts: Mapping[str, int]
    """How many cases of the run got each mark."""
    names: Mapping[str, tuple[str, ...]]
    """The names of the cases of each mark (the first `MAX_NAMED`, in suite order)."""
    removed: int = 0
    removed_names: tuple[str, ...] = ()
    still_failing: int = 0
    statistics: PairedStatistics | None = None
    """The paired statistics of the cases in both runs (None: not computed)."""
    base_pass_rate: float | None = None
    """The baseline's pass rate (passed / its cases); None when it has no case."""
    new_pass_rate: float | None = None
    """The run's pass rate over the cases counted; None when none was."""

    def mark(self, case: MarkedCase) -> Mark:
        """The case's mark (see `Baseline.mark`)."""
        return self.baseline.mark(case)

    @property
    def source(self) -> str:
        """The file the baseline was read from (`""` for report objects)."""
        return self.baseline.source

    @property
    def verdict(self) -> str | None:
        """The paired comparison in one line (`statistics.verdict_line`); None when the marks
        carry no statistics."""
        if self.statistics is None:
            return None
        all_paired = not self.counts["new"] and not self.removed
        return verdict_line(
            self.base_pass_rate, self.new_pass_rate, self.statistics, all_paired=all_paired
        )

    @property
    def regressed(self) -> int:
        """How many cases regressed: passing in the baseline, failing or erroring now."""
        return self.counts["regressed"]

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's `summary.baseline` (docs/reports.md)."""
        return {
            "report": self.baseline.source,
            **{mark: self.counts[mark] for mark in ("new", "fixed", "regressed", "unchanged")},
            "removed": self.removed,
            "still_failing": self.still_failing,
            **({} if self.statistics is None else {"statistics": self.statistics.to_dict()}),
        }

    def summary(self) -> dict[str, Any]:
        """What the marks add to the JSON report's `summary`: its `baseline`."""
        return {"baseline": self.to_dict()}

    def marked(self, case: MarkedCase) -> dict[str, Any]:
        """The case's JSON form with its mark, the key `baseline`."""
        return {**case.to_dict(), "baseline": self.mark(case)}

    def mark_text(self, text: str, mark: str | None = None) -> str:
        """A case's JSON text (one line, as the results log holds it) with its mark added as
        the key `baseline`; `mark`: the case's, when known (the text is then not parsed)."""
        if mark is None or '"baseline"' in text:
            data = json.loads(text)
            if "baseline" in data:  # marked before: the mark is replaced, not repeated
                return json.dumps(self.marked_dict(data), ensure_ascii=False)
            mark = self.baseline.mark_data(data)
        return with_mark(text, mark)

    def marked_dict(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A case's JSON form with its mark added as the key `baseline`."""
        return {**data, "baseline": self.baseline.mark_data(data)}


class BaselineTally:
    """Counts the marks of a run's cases, one case at a time as they end (see
    `Baseline.tally`), and keeps each case's outcome and scores for the paired statistics;
    the names of each mark come out in suite order whatever the order."""

    def __init__(self, baseline: Baseline) -> None:
        self._baseline = baseline
        self._counts: dict[str, int] = dict.fromkeys(MARKS, 0)
        # Per mark, the MAX_NAMED cases of the lowest suite positions seen so far, as a heap
        # whose top is the highest of them: cases end in any order, names are in suite order.
        self._named: dict[Mark, list[tuple[int, str]]] = {mark: [] for mark in MARKS}
        self._still_failing = 0
        self._arrivals = 0
        # (name, attempt) -> outcome and scores of the run's cases, for the paired statistics
        self._cases: dict[CaseKey, Seen] = {}
        self._loads = line_reader()  # orjson's, where installed: a case's text read faster

    def add(self, case: CaseReport, position: int | None = None) -> Mark:
        """Count one case of the run; its mark. `position`: the case's place in the suite,
        which orders the names (None: after every case counted so far)."""
        seen = self._baseline.layouts.seen(case.outcome, case_scores(case))
        return self._count((case.name, case.attempt), seen, position)

    def add_text(self, text: str, position: int | None = None) -> Mark:
        """Count one case of the run given as its JSON text (a results log's line), read for
        its name, verdict and scores; its mark. `position`: as `add`'s."""
        data: Any = None
        if self._loads is not None:
            try:  # noqa: SIM105 - a try costs less than a suppress() per case
                data = self._loads(text)
            except ValueError:  # what orjson refuses (NaN in a sample): the standard library
                pass
        if data is None:
            data = json.loads(text)
        seen = self._baseline.layouts.seen(outcome_of_data(data), data_scores(data))
        return self._count(key_of_data(data), seen, position)

    def count(
        self,
        name: str,
        attempt: int | None,
        outcome: Outcome,
        position: int | None = None,
        scores: Iterable[tuple[int, str, float]] = (),
    ) -> Mark:
        """Count one case of the run by its name, attempt index, outcome and `scores` (turn
        index, grader name, score of each result that did not error); its mark.
        `position`: as `add`'s."""
        seen = self._baseline.layouts.seen(outcome, scores)
        return self._count((name, attempt), seen, position)

    def add_all(self, cases: Iterable[CaseReport]) -> BaselineTally:
        """Count every case of `cases`; this tally."""
        for case in cases:
            self.add(case)
        return self

    def add_texts(self, texts: Iterable[str]) -> BaselineTally:
        """Count every case of `texts`, their JSON texts (a results log's lines), read only
        for the name and the verdict; this tally."""
        for text in texts:
            self.add_text(text)
        return self

    def _count(self, key: CaseKey, seen: Seen, position: int | None) -> Mark:
        outcome = seen.outcome
        mark = mark_of(self._baseline._outcome(key), outcome)
        self._counts[mark] += 1
        if position is None:
            position = self._arrivals
        self._arrivals = max(self._arrivals, position + 1)
        named = self._named[mark]
        if len(named) < MAX_NAMED:
            heapq.heappush(named, (-position, case_label(*key)))
        elif position < -named[0][0]:
            heapq.heapreplace(named, (-position, case_label(*key)))
        self._cases[key] = seen
        if mark == "unchanged" and outcome != "pass":
            self._still_failing += 1
        return mark

    def statistics(self, confidence: float = DEFAULT_CONFIDENCE) -> PairedStatistics:
        """The paired statistics of the cases counted so far against the baseline's, by
        name, at `confidence`, per grader too: the figures `gradekit compare` gives of the
        same runs (see `gradekit.history.case_scores.paired_case_statistics`)."""
        return paired_case_statistics(self._baseline.cases, self._cases, confidence)

    def marks(self, confidence: float = DEFAULT_CONFIDENCE) -> BaselineMarks:
        """The marks counted so far, with their statistics at `confidence`."""
        cases = self._baseline.cases
        counted = self._cases
        removed = [case_label(*key) for key in cases if key not in counted]
        return BaselineMarks(
            baseline=self._baseline,
            counts=dict(self._counts),
            names={
                mark: tuple(label for _, label in sorted(named, reverse=True))
                for mark, named in self._named.items()
            },
            removed=len(removed),
            removed_names=tuple(removed[:MAX_NAMED]),
            still_failing=self._still_failing,
            statistics=self.statistics(confidence),
            base_pass_rate=_pass_rate(cases),
            new_pass_rate=_pass_rate(counted),
        )


def _pass_rate(cases: Mapping[CaseKey, Seen]) -> float | None:
    """Passed / all of `cases`; None when there is none."""
    if not cases:
        return None
    return sum(1 for case in cases.values() if case.outcome == "pass") / len(cases)
