"""What comparing two runs reads of each case: its outcome, and each grader's score on each
turn (results that did not error).

Read from a file straight from the cases' JSON forms, one at a time (`CaseForms`, which also
give a case's key, `key_of_data`, and outcome, `outcome_of_data`, as `--resume`,
`--rerun-failed` and `--baseline` read them): no case
report is built and neither file is held whole, so two runs of a million cases compare in
memory for their scores alone. From report objects, the same is read from the objects.

`paired_case_statistics(before, after)` is the paired statistics of two runs so read: what
`gradekit compare` and `gradekit run --baseline` both give, by the one function.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

from gradekit.history.statistics import PairedDifferences, PairedStatistics, paired_statistics
from gradekit.report.attempts import DEFAULT_CONFIDENCE
from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, Outcome, SuiteReport, outcome_of
from gradekit.report.reading import Run, environment_of, not_a_report, read_run
from gradekit.report.report_stream import case_forms

CaseKey = tuple[str, int | None]
"""What tells a run's cases apart: the name, and the attempt index of one of several attempts."""


ReadWatch = Callable[[str], contextlib.AbstractContextManager[Callable[[], None]]]
"""`watch(path)`: the context in which the run's file at `path` is read; it yields a function
called once per case read (`ReportsProgress.reading`)."""


def read_outcomes(run: Run, watch: ReadWatch | None = None) -> Iterator[tuple[CaseKey, Outcome]]:
    """`((name, attempt), outcome)` of each case of a run, in its order: what `read_run`
    reads, without building case reports from a file (a baseline needs no more). `watch`:
    the progress of reading a file."""
    if not isinstance(run, (str, os.PathLike)):
        for case in read_run(run):
            yield (case.name, case.attempt), case.outcome
        return
    forms = CaseForms(run, watch)
    for item in forms:
        try:
            yield key_of_data(item), outcome_of_data(item)
        except (KeyError, TypeError, AttributeError) as error:
            raise not_a_report(forms.path, error) from None


class CaseForms:
    """The JSON forms of the cases of a run's file, read one at a time: the items of a JSON
    report (streamed: `report_stream`) or the complete lines of a results log. Iterate once;
    then `head` holds the report's other keys (`environment`, ...; empty for a log).
    `watch`: the progress of the reading.

    For what the readers of outcomes and scores read of a case: a JSON report's cases are
    read `fast` (`report_stream`), where an integer past 64 bits reads as a float."""

    def __init__(self, path: str | os.PathLike[str], watch: ReadWatch | None = None) -> None:
        self.path: Final = Path(path)
        self.head: Mapping[str, Any] = {}
        self._watch = watch

    def __iter__(self) -> Iterator[Any]:
        if self._watch is None:
            yield from self._forms()
            return
        with self._watch(str(self.path)) as tick:
            for form in self._forms():
                tick()
                yield form

    def _forms(self) -> Iterator[Any]:
        heads: list[Mapping[str, Any]] = []
        yield from case_forms(self.path, heads, fast=True)
        if heads:
            self.head = heads[0]


def key_of_data(data: Mapping[str, Any]) -> CaseKey:
    """The `(name, attempt)` of a case's JSON form (KeyError without `name`)."""
    attempt = data.get("attempt")
    return str(data["name"]), attempt if isinstance(attempt, int) else None


def outcome_of_data(data: Mapping[str, Any]) -> Outcome:
    """The outcome of a case's JSON form, as `CaseReport.outcome` says it (KeyError without
    `passed`)."""
    errored = bool(data.get("errored")) or data.get("error") is not None
    return outcome_of(bool(data["passed"]), errored)


__all__ = [
    "CaseForms",
    "CaseKey",
    "Layout",
    "ReadWatch",
    "Scores",
    "Seen",
    "SeenReader",
    "case_scores",
    "data_scores",
    "iter_seen",
    "key_of_data",
    "outcome_of_data",
    "paired_case_statistics",
    "read_outcomes",
    "read_seen",
]

Scores = dict[tuple[int, str], float]
"""A case's scores by (turn index, grader name), of the results that did not error."""

Layout = tuple[tuple[int, str], ...]
"""The (turn index, grader name) of each score of a case, in order, each once. Cases graded
alike share one layout object: most cases of a run have the same."""


class Seen(NamedTuple):
    """What a comparison reads of one case: its outcome, and its scores (`values`, in the
    order of `layout`)."""

    outcome: Outcome
    layout: Layout
    values: tuple[float, ...]

    def scores(self) -> Scores:
        """The scores by (turn index, grader name)."""
        return dict(zip(self.layout, self.values, strict=True))


_BINARY: Final = frozenset((0.0, 1.0))


class SeenReader:
    """Builds each case's `Seen`, sharing layouts between cases graded alike."""

    def __init__(self) -> None:
        self._layouts: dict[Layout, Layout | None] = {}
        """Each layout seen, as shared; None for one that names a score twice."""
        self._values: dict[tuple[float, ...], tuple[float, ...]] = {}
        """Each tuple of scores all 0 or 1 seen, as shared: most cases' scores are."""

    def seen(self, outcome: Outcome, scores: Iterable[tuple[int, str, float]]) -> Seen:
        """A case's `Seen` from its scores as (turn index, grader name, score): a name given
        twice on a turn (two entries of one name) counts as its last score."""
        listed = list(scores)
        layout = tuple([(turn, name) for turn, name, _ in listed])
        shared = self._layouts.get(layout, ())
        if shared == ():
            shared = layout if len(set(layout)) == len(layout) else None
            self._layouts[layout] = shared
        if shared is None:
            last = {(turn, name): score for turn, name, score in listed}
            return Seen(outcome, tuple(last), tuple(last.values()))
        values = tuple([score for _, _, score in listed])
        if _BINARY.issuperset(values):  # few distinct ones: each kept once
            values = self._values.setdefault(values, values)
        return Seen(outcome, shared, values)


def read_seen(
    run: Run, watch: ReadWatch | None = None, layouts: SeenReader | None = None
) -> tuple[dict[CaseKey, Seen], Environment | None]:
    """What a comparison reads of each case of `run` (a file, a `SuiteReport` or case
    reports), by name and attempt, in the run's order, and the run's environment (None when
    it records none). A case held twice (a resumed log) counts as its last copy. `watch`:
    the progress of reading a file; `layouts`: the reader whose layouts the cases share (one
    for both runs of a comparison, so that their cases graded alike share theirs)."""
    seen: dict[CaseKey, Seen] = {}
    environment: list[Environment | None] = [None]
    for key, case in iter_seen(run, watch, layouts, environment):
        seen[key] = case
    return seen, environment[0]


def iter_seen(
    run: Run,
    watch: ReadWatch | None = None,
    layouts: SeenReader | None = None,
    environment: list[Environment | None] | None = None,
) -> Iterator[tuple[CaseKey, Seen]]:
    """Each case of `run` as `read_seen` reads it, `((name, attempt), Seen)`, in the run's
    order (a case held twice comes twice). Once the cases are read, `environment[0]` (when
    given) is the run's environment."""
    reader = layouts or SeenReader()
    if isinstance(run, (str, os.PathLike)):
        forms = CaseForms(run, watch)
        for data in forms:
            try:
                yield key_of_data(data), reader.seen(outcome_of_data(data), data_scores(data))
            except (KeyError, TypeError, AttributeError, ValueError) as error:
                raise not_a_report(forms.path, error) from None
        if environment is not None:
            environment[0] = environment_of(forms.head)
        return
    cases: Iterable[CaseReport] = run.cases if isinstance(run, SuiteReport) else run
    for case in cases:
        key = (case.name, case.attempt)
        yield key, reader.seen(case.outcome, case_scores(case))
    if environment is not None and isinstance(run, SuiteReport):
        environment[0] = run.environment


def case_scores(case: CaseReport) -> Iterator[tuple[int, str, float]]:
    """A case report's scores as (turn index, grader name, score), of the results that did
    not error."""
    for turn in case.turns:
        for record in turn.results:
            result = record.result
            if result.error is None:
                yield turn.index, result.name, result.score


def data_scores(data: Mapping[str, Any]) -> Iterator[tuple[int, str, float]]:
    """The scores of a case's JSON form, as `case_scores` reads them of its report."""
    for turn in data.get("turns", ()):
        index = int(turn["index"])
        for result in turn.get("results", ()):
            if result.get("error") is None:
                yield index, str(result["name"]), float(result["score"])


class _Group:
    """One case (by name) of a run: its passes and attempts, and each grader's scores."""

    __slots__ = ("attempts", "passes", "scores")

    def __init__(self, cases: Iterable[Seen]) -> None:
        self.passes = 0
        self.attempts = 0
        self.scores: dict[str, list[float]] = {}  # grader -> [sum, how many]
        for case in cases:
            self.passes += case.outcome == "pass"
            self.attempts += 1
            for (_, grader), score in zip(case.layout, case.values, strict=True):
                sums = self.scores.get(grader)
                if sums is None:
                    sums = self.scores[grader] = [0.0, 0.0]
                sums[0] += score
                sums[1] += 1


def _in_order(key: CaseKey) -> tuple[str, int]:
    return key[0], -1 if key[1] is None else key[1]


def _by_name(cases: Mapping[CaseKey, Seen]) -> Iterator[tuple[str, list[Seen]]]:
    """Each name of `cases` with its cases, by name and attempt: the same sums whatever order
    the cases ended (or were read) in."""
    name: str | None = None
    group: list[Seen] = []
    for key in sorted(cases, key=_in_order):
        if key[0] != name:
            if name is not None:
                yield name, group
            name, group = key[0], []
        group.append(cases[key])
    if name is not None:
        yield name, group


def _paired_groups(
    before: Mapping[CaseKey, Seen], after: Mapping[CaseKey, Seen]
) -> Iterator[tuple[list[Seen], list[Seen]]]:
    """The cases of each name both runs have (before's, after's), by name."""
    old = _by_name(before)
    found = next(old, None)
    for name, new in _by_name(after):
        while found is not None and found[0] < name:
            found = next(old, None)
        if found is not None and found[0] == name:
            yield found[1], new


def paired_case_statistics(
    before: Mapping[CaseKey, Seen],
    after: Mapping[CaseKey, Seen],
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedStatistics:
    """The paired statistics of the cases both runs have, by name: each case's value is its
    pass (1 or 0: failed and errored are both not a pass), or with attempts its mean pass
    over them; each grader's, its mean score over the case's turns (and attempts) of the
    results that did not error. The same figures whatever the order of either mapping."""
    passes = PairedDifferences()
    graders: dict[str, PairedDifferences] = {}
    plain: dict[int, bool] = {}  # by layout: each grader in it once
    for olds, news in _paired_groups(before, after):
        if len(olds) == 1 and len(news) == 1 and olds[0].layout is news[0].layout:
            # One case graded alike in both runs (the usual): its scores pair by position.
            old, new = olds[0], news[0]
            layout = new.layout
            once = plain.get(id(layout))
            if once is None:
                once = plain[id(layout)] = len({g for _, g in layout}) == len(layout)
            if once:
                passes.add(float(old.outcome == "pass"), float(new.outcome == "pass"))
                for (_, grader), was, now in zip(layout, old.values, new.values, strict=True):
                    differences = graders.get(grader)
                    if differences is None:
                        differences = graders[grader] = PairedDifferences()
                    differences.add(was, now)
                continue
        old_group, new_group = _Group(olds), _Group(news)
        passes.add(old_group.passes / old_group.attempts, new_group.passes / new_group.attempts)
        for grader, (total, count) in new_group.scores.items():
            was_sums = old_group.scores.get(grader)
            if was_sums is not None:
                differences = graders.get(grader)
                if differences is None:
                    differences = graders[grader] = PairedDifferences()
                differences.add(was_sums[0] / was_sums[1], total / count)
    attempts = any(key[1] is not None for key in before) or any(key[1] is not None for key in after)
    return paired_statistics(passes, attempts=attempts, graders=graders, confidence=confidence)
