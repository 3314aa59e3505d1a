"""What comparing two runs reads of each case: its outcome, and each grader's score on each
turn (results that did not error).

Read from a file straight from the cases' JSON forms, one at a time (`CaseForms`): no case
report is built and neither file is held whole, so two runs of a million cases compare in
memory for their scores alone. From report objects, the same is read from the objects.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, Outcome, SuiteReport
from gradekit.report.reading import (
    CaseForms,
    CaseKey,
    ReadWatch,
    Run,
    environment_of,
    key_of_data,
    not_a_report,
    outcome_of_data,
)

__all__ = ["Layout", "Scores", "Seen", "SeenReader", "read_seen"]

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


class SeenReader:
    """Builds each case's `Seen`, sharing layouts between cases graded alike."""

    def __init__(self) -> None:
        self._layouts: dict[Layout, Layout | None] = {}
        """Each layout seen, as shared; None for one that names a score twice."""

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
        return Seen(outcome, shared, tuple([score for _, _, score in listed]))


def read_seen(
    run: Run, watch: ReadWatch | None = None, layouts: SeenReader | None = None
) -> tuple[dict[CaseKey, Seen], Environment | None]:
    """What a comparison reads of each case of `run` (a file, a `SuiteReport` or case
    reports), by name and attempt, in the run's order, and the run's environment (None when
    it records none). A case held twice (a resumed log) counts as its last copy. `watch`:
    the progress of reading a file; `layouts`: the reader whose layouts the cases share (one
    for both runs of a comparison, so that their cases graded alike share theirs)."""
    seen: dict[CaseKey, Seen] = {}
    reader = layouts or SeenReader()
    if isinstance(run, (str, os.PathLike)):
        forms = CaseForms(run, watch)
        for data in forms:
            try:
                seen[key_of_data(data)] = reader.seen(outcome_of_data(data), _data_scores(data))
            except (KeyError, TypeError, AttributeError, ValueError) as error:
                raise not_a_report(forms.path, error) from None
        return seen, environment_of(forms.head)
    cases: Iterable[CaseReport] = run.cases if isinstance(run, SuiteReport) else run
    for case in cases:
        key = (case.name, case.attempt)
        seen[key] = reader.seen(case.outcome, _case_scores(case))  # type: ignore[arg-type]
    return seen, run.environment if isinstance(run, SuiteReport) else None


def _case_scores(case: CaseReport) -> Iterator[tuple[int, str, float]]:
    """A case report's scores, of the results that did not error."""
    for turn in case.turns:
        for record in turn.results:
            result = record.result
            if result.error is None:
                yield turn.index, result.name, result.score


def _data_scores(data: Mapping[str, Any]) -> Iterator[tuple[int, str, float]]:
    """The scores of a case's JSON form, as `_case_scores` reads them of its report."""
    for turn in data.get("turns", ()):
        index = int(turn["index"])
        for result in turn.get("results", ()):
            if result.get("error") is None:
                yield index, str(result["name"]), float(result["score"])
