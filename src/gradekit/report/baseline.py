"""A run's cases marked against a baseline run: `new`, `fixed`, `regressed` or `unchanged`.

`Baseline.load(run)` reads the baseline (a JSON report, a `--resume` log, a `SuiteReport` or
case reports, as `gradekit compare` does) and keeps each case's outcome by name (and attempt
index, for one of several attempts), nothing more. `baseline.mark(case)` is how a case of the
new run compares with the case of the same name and attempt
(the rule of `gradekit compare`: `compare.mark_of`). A `BaselineTally` counts the marks of a
run's cases as they stream past; its `marks()` is the `BaselineMarks` a `SuiteReport` carries
(`report.baseline`), which every report shows, with the paired `statistics` of the cases in
both runs (`gradekit.report.statistics`; by name, each case's pass or, with attempts, its mean
pass over them; no per-grader figures: the baseline keeps outcomes, not scores).
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from gradekit.report.attempts import case_label
from gradekit.report.compare import Mark, Outcome, mark_of
from gradekit.report.model import CaseReport
from gradekit.report.reading import (
    CaseKey,
    ReadWatch,
    Run,
    key_of_data,
    outcome_of_data,
    read_outcomes,
)
from gradekit.report.statistics import (
    DEFAULT_CONFIDENCE,
    PairedDifferences,
    PairedStatistics,
    paired_statistics,
)

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


def with_mark(text: str, mark: Mark) -> str:
    """A case's JSON text (one object, no key `baseline` yet) with `mark` as its `baseline`."""
    return f'{text.rstrip()[:-1]}, "baseline": "{mark}"}}'


@attrs.frozen
class Baseline:
    """A baseline run's outcome of each case, by (name, attempt). `source`: the file it was
    read from (`""` for report objects)."""

    source: str
    outcomes: Mapping[CaseKey, Outcome] = attrs.field(repr=False)

    @classmethod
    def load(cls, run: Run | Baseline, watch: ReadWatch | None = None) -> Baseline:
        """Read `run` (see `gradekit.report.reading.read_run`); a file that is no report is a
        ConfigError naming it. In a resumed log holding a case twice, the last one counts.
        `watch`: the progress of reading a file."""
        if isinstance(run, Baseline):
            return run
        source = os.fspath(run) if isinstance(run, (str, os.PathLike)) else ""
        outcomes: dict[CaseKey, Outcome] = {}
        for key, outcome in read_outcomes(run, watch):
            outcomes.pop(key, None)  # a case read again keeps its place at the end
            outcomes[key] = outcome
        return cls(source, outcomes)

    def mark(self, case: CaseReport) -> Mark:
        """How `case` compares with the baseline's case of the same name and attempt."""
        key = (case.name, case.attempt)
        return mark_of(self.outcomes.get(key), case.outcome)  # type: ignore[arg-type]

    def mark_data(self, data: Mapping[str, Any]) -> Mark:
        """`mark` of a case's JSON form."""
        return mark_of(self.outcomes.get(key_of_data(data)), outcome_of_data(data))

    def tally(self) -> BaselineTally:
        """A fresh count of the marks of a run's cases."""
        return BaselineTally(self)


@attrs.frozen
class BaselineMarks:
    """How a run compares with its baseline: the cases of each mark (counts, and the first
    `MAX_NAMED` names of each, in suite order), the baseline's cases the run does not have
    (`removed`), and among `unchanged` those that did not pass either time (`still_failing`).
    `mark(case)` marks any case of the run."""

    baseline: Baseline
    counts: Mapping[Mark, int]
    names: Mapping[Mark, tuple[str, ...]]
    removed: int = 0
    removed_names: tuple[str, ...] = ()
    still_failing: int = 0
    statistics: PairedStatistics | None = None
    """The paired statistics of the cases in both runs (None: not computed)."""
    base_pass_rate: float | None = None
    """The baseline's pass rate (passed / its cases); None when it has no case."""
    new_pass_rate: float | None = None
    """The run's pass rate over the cases counted; None when none was."""

    def mark(self, case: CaseReport) -> Mark:
        """The case's mark (see `Baseline.mark`)."""
        return self.baseline.mark(case)

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

    def marked(self, case: CaseReport) -> dict[str, Any]:
        """The case's JSON form with its mark, the key `baseline`."""
        return {**case.to_dict(), "baseline": self.mark(case)}

    def mark_text(self, text: str, mark: Mark | None = None) -> str:
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
    `Baseline.tally`); the names of each mark come out in suite order whatever the order."""

    def __init__(self, baseline: Baseline) -> None:
        self._baseline = baseline
        self._counts: dict[Mark, int] = dict.fromkeys(MARKS, 0)
        # Per mark, the MAX_NAMED cases of the lowest suite positions seen so far, as a heap
        # whose top is the highest of them: cases end in any order, names are in suite order.
        self._named: dict[Mark, list[tuple[int, str]]] = {mark: [] for mark in MARKS}
        self._seen: set[CaseKey] = set()
        self._still_failing = 0
        self._arrivals = 0
        # name -> [passed, attempts] of the run's cases, for the paired statistics
        self._groups: dict[str, list[int]] = {}
        self._attempts = False

    def add(self, case: CaseReport, position: int | None = None) -> Mark:
        """Count one case of the run; its mark. `position`: the case's place in the suite,
        which orders the names (None: after every case counted so far)."""
        return self._count((case.name, case.attempt), case.outcome, position)  # type: ignore[arg-type]

    def count(
        self, name: str, attempt: int | None, outcome: Outcome, position: int | None = None
    ) -> Mark:
        """Count one case of the run by its name, attempt index and outcome; its mark.
        `position`: as `add`'s."""
        return self._count((name, attempt), outcome, position)

    def add_all(self, cases: Iterable[CaseReport]) -> BaselineTally:
        """Count every case of `cases`; this tally."""
        for case in cases:
            self.add(case)
        return self

    def add_texts(self, texts: Iterable[str]) -> BaselineTally:
        """Count every case of `texts`, their JSON texts (a results log's lines), read only
        for the name and the verdict; this tally."""
        for text in texts:
            data = json.loads(text)
            self._count(key_of_data(data), outcome_of_data(data), None)
        return self

    def _count(self, key: CaseKey, outcome: Outcome, position: int | None) -> Mark:
        mark = mark_of(self._baseline.outcomes.get(key), outcome)
        self._counts[mark] += 1
        if position is None:
            position = self._arrivals
        self._arrivals = max(self._arrivals, position + 1)
        named = self._named[mark]
        if len(named) < MAX_NAMED:
            heapq.heappush(named, (-position, case_label(*key)))
        elif position < -named[0][0]:
            heapq.heapreplace(named, (-position, case_label(*key)))
        group = self._groups.get(key[0])
        if group is None:
            group = self._groups[key[0]] = [0, 0]
        group[0] += outcome == "pass"
        group[1] += 1
        self._attempts = self._attempts or key[1] is not None
        if key in self._baseline.outcomes:
            self._seen.add(key)
        if mark == "unchanged" and outcome != "pass":
            self._still_failing += 1
        return mark

    def statistics(self, confidence: float = DEFAULT_CONFIDENCE) -> PairedStatistics:
        """The paired statistics of the cases counted so far against the baseline's, by
        name, at `confidence` (see `gradekit.report.statistics.paired_statistics`)."""
        base: dict[str, list[int]] = {}
        attempts = self._attempts
        for (name, attempt), outcome in self._baseline.outcomes.items():
            group = base.get(name)
            if group is None:
                group = base[name] = [0, 0]
            group[0] += outcome == "pass"
            group[1] += 1
            attempts = attempts or attempt is not None
        passes = PairedDifferences()
        # By name, as `compare` adds them: the same figures whatever order the cases ended in.
        for name, (passed, count) in sorted(self._groups.items()):
            was = base.get(name)
            if was is not None:
                passes.add(was[0] / was[1], passed / count)
        return paired_statistics(passes, attempts=attempts, confidence=confidence)

    def marks(self, confidence: float = DEFAULT_CONFIDENCE) -> BaselineMarks:
        """The marks counted so far, with their statistics at `confidence`."""
        outcomes = self._baseline.outcomes
        base_passed = sum(1 for outcome in outcomes.values() if outcome == "pass")
        groups = self._groups.values()
        counted = sum(g[1] for g in groups)
        removed = [case_label(*key) for key in self._baseline.outcomes if key not in self._seen]
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
            base_pass_rate=base_passed / len(outcomes) if outcomes else None,
            new_pass_rate=sum(g[0] for g in groups) / counted if counted else None,
        )
