"""Writing the reports of one run in several formats at once: every one is tried, and each is
written whole or not at all (`gradekit run -o r.json --junit r.xml ...`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from importlib import import_module
from typing import Any, Final, Protocol

from gradekit.core.errors import WriteError
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["FORMATS", "CaseSource", "Watch", "write_reports", "writer_of"]

FORMATS: Final[dict[str, str]] = {
    "json": "write_json",
    "junit": "write_junit",
    "markdown": "write_markdown",
    "html": "write_html",
}
"""Each format's writer, `writer(report, path, cases=None)`, by its name in `gradekit.report`
(which imports a writer's module only when the writer is first asked for)."""


def writer_of(form: str) -> Callable[..., None]:
    """The writer of the format `form` (a key of FORMATS)."""
    writer: Callable[..., None] = getattr(import_module("gradekit.report"), FORMATS[form])
    return writer


class CaseSource(Protocol):
    """Where a run's cases can be read back in suite order (`gradekit.ResultsLog`)."""

    def cases(self) -> Iterator[CaseReport]:
        """Every case, parsed."""

    def case_texts(self) -> Iterator[str]:
        """Every case's JSON text, as the JSON report holds it."""

    def failing(self) -> Iterator[CaseReport]:
        """Every case that did not pass, parsed (the passing ones are not read)."""


Watch = Callable[[str, int], contextlib.AbstractContextManager[Callable[[], None]]]
"""`watch(path, total)`: the context in which the report at `path` (of `total` cases) is
written; it yields a function called once per case written (`ReportsProgress.writing`)."""


def _counted(cases: Iterable[Any], tick: Callable[[], None]) -> Iterator[Any]:
    for case in cases:
        tick()
        yield case


def write_reports(
    report: SuiteReport,
    targets: Iterable[tuple[str, str | os.PathLike[str]]],
    source: CaseSource | None = None,
    *,
    watch: Watch | None = None,
) -> list[WriteError]:
    """Write `report` as each `(format, path)` of `targets` (formats: see FORMATS).

    The cases come from `source` when given (streamed, for runs too large to hold), else from
    `report.cases`. A target that cannot be written does not stop the others: the failures
    are returned, one WriteError each, naming the path and the cause. `watch`, when given,
    sees each report written (its start, each case, its end).
    """
    failures = []
    summary = report.summary
    for form, path in targets:
        cases: Any = None
        total = summary.cases
        if source is not None:
            if form == "json":  # the log's lines are the report's items: copied as they are
                cases = source.case_texts()
            elif form == "markdown":  # it lists only the cases that did not pass
                cases, total = source.failing(), summary.failed + summary.errored
            else:
                cases = source.cases()
        try:
            if watch is None:
                writer_of(form)(report, path, cases)
                continue
            items = report.cases if cases is None else cases
            with watch(os.fspath(path), total) as tick:
                writer_of(form)(report, path, _counted(items, tick))
        except WriteError as error:
            failures.append(error)
    return failures
