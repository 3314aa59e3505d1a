"""Writing the reports of one run in several formats at once: every one is tried, and each is
written whole or not at all (`gradekit run -o r.json --junit r.xml ...`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Protocol

from gradekit._errors import WriteError
from gradekit.report.html import write_html
from gradekit.report.json import write_json
from gradekit.report.junit import write_junit
from gradekit.report.markdown import write_markdown
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["FORMATS", "CaseSource", "Watch", "write_reports"]

FORMATS: Final[dict[str, Callable[..., None]]] = {
    "json": write_json,
    "junit": write_junit,
    "markdown": write_markdown,
    "html": write_html,
}
"""Each format's writer: `writer(report, path, cases=None)`."""


class CaseSource(Protocol):
    """Where a run's cases can be read back in suite order (`gradekit.ResultsLog`)."""

    def cases(self) -> Iterator[CaseReport]:
        """Every case, parsed."""

    def case_texts(self) -> Iterator[str]:
        """Every case's JSON text, as the JSON report holds it."""


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
    for form, path in targets:
        cases: Any = None
        if source is not None:
            # The log's lines are the JSON report's items already: copied, not re-encoded.
            cases = source.case_texts() if form == "json" else source.cases()
        try:
            if watch is None:
                FORMATS[form](report, path, cases)
                continue
            items = report.cases if cases is None else cases
            with watch(os.fspath(path), report.summary.cases) as tick:
                FORMATS[form](report, path, _counted(items, tick))
        except WriteError as error:
            failures.append(error)
    return failures
