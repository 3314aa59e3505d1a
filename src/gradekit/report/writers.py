"""Writing the reports of one run in several formats at once: every one is tried, and each is
written whole or not at all (`gradekit run -o r.json --junit r.xml ...`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Protocol

from gradekit._errors import WriteError
from gradekit.report.html import write_html
from gradekit.report.json import write_json
from gradekit.report.junit import write_junit
from gradekit.report.markdown import write_markdown
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["FORMATS", "CaseSource", "write_reports"]

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


def write_reports(
    report: SuiteReport,
    targets: Iterable[tuple[str, str | os.PathLike[str]]],
    source: CaseSource | None = None,
) -> list[WriteError]:
    """Write `report` as each `(format, path)` of `targets` (formats: see FORMATS).

    The cases come from `source` when given (streamed, for runs too large to hold), else from
    `report.cases`. A target that cannot be written does not stop the others: the failures
    are returned, one WriteError each, naming the path and the cause.
    """
    failures = []
    for form, path in targets:
        cases: Any = None
        if source is not None:
            # The log's lines are the JSON report's items already: copied, not re-encoded.
            cases = source.case_texts() if form == "json" else source.cases()
        try:
            FORMATS[form](report, path, cases)
        except WriteError as error:
            failures.append(error)
    return failures
