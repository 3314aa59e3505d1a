"""Reports: the report model and its
writers: JSON, the JSONL results log (`--resume`), JUnit XML, Markdown, HTML and the console.

Every writer takes the `SuiteReport` and, optionally, the cases as a separate iterable, so a
run of millions of cases can stream them from its JSONL log instead of holding them all.

May import: `core` only (the model is plain data; writers read it)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names are, for type checkers
    from gradekit.report.html import write_html
    from gradekit.report.json import CaseLog, read_cases, write_json
    from gradekit.report.junit import write_junit
    from gradekit.report.markdown import render_markdown, write_markdown
    from gradekit.report.reading import to_frame, to_records

# Each writer is imported when it is first asked for: a run writing one JSON report does not
# load the HTML viewer's, the Markdown and the JUnit writers' modules.
_LAZY = {
    "CaseLog": "json",
    "read_cases": "json",
    "render_markdown": "markdown",
    "to_frame": "reading",
    "to_records": "reading",
    "write_html": "html",
    "write_json": "json",
    "write_junit": "junit",
    "write_markdown": "markdown",
}

__all__ = [
    "CaseLog",
    "read_cases",
    "render_markdown",
    "to_frame",
    "to_records",
    "write_html",
    "write_json",
    "write_junit",
    "write_markdown",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradekit.report' has no attribute {name!r}")
    value = getattr(import_module(f"gradekit.report.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
