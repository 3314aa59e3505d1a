"""Reports: the report model (and cheap builders of its objects, for the runner) and its
writers: JSON, the JSONL results log (`--resume`), JUnit XML, Markdown, HTML and the console.

Every writer takes the `SuiteReport` and, optionally, the cases as a separate iterable, so a
run of millions of cases can stream them from its JSONL log instead of holding them all.

May import: the core modules only (the model is plain data; writers read it).
"""

from __future__ import annotations

from gradekit.report.html import write_html
from gradekit.report.json import write_json
from gradekit.report.jsonl import CaseLog, read_cases
from gradekit.report.junit import write_junit
from gradekit.report.markdown import render_markdown, write_markdown
from gradekit.report.records import to_frame, to_records

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
