"""JUnit XML, the format CI systems read: one testsuite per suite, one testcase per case.

A failing grader is a `<failure>`, an errored grader (or a case that could not be loaded) an
`<error>`. Turns not run because an earlier error ended the case are a `<skipped>` element
when the case has no failure or error to show; otherwise they are listed in the error's text,
because CI systems give a testcase one status and some rank `skipped` above `error`, which
would hide the error.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterable
from typing import TextIO

from gradekit._frozen import thaw
from gradekit.report._atomic import atomic_text
from gradekit.report._text import advisory_errors, one_line, result_text
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["write_junit"]

# Characters XML 1.0 cannot carry at all, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    clean = _INVALID_XML.sub("\ufffd", value)
    return clean.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(value: str) -> str:
    escaped = _text(value).replace('"', "&quot;")
    return escaped.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")


def _seconds(milliseconds: float) -> str:
    return f"{max(milliseconds, 0.0) / 1000:.3f}"


def _error_type(error: str) -> str:
    head, _, _ = error.partition(":")
    return head if head and " " not in head else "Error"


def _element(tag: str, kind: str, message: str, body: str) -> str:
    return (
        f'      <{tag} type="{_attr(kind)}" message="{_attr(one_line(message))}">'
        f"{_text(body)}</{tag}>\n"
    )


def _testcase(case: CaseReport, classname: str) -> tuple[str, str]:
    """The `<testcase>` element of `case` and its status: pass, fail, error or skipped."""
    parts: list[str] = []
    if case.error is not None:
        parts.append(_element("error", _error_type(case.error), case.error, case.error))
    skipped = [turn.index for turn in case.turns if turn.skipped]
    for turn in case.turns:
        for record in turn.results:
            result = record.result
            if record.advisory or result.outcome == "pass":
                continue
            message = f"turn {turn.index}: {result.name}: {result_text(record)}"
            body = message
            if result.details is not None:
                body += "\ndetails: " + json.dumps(thaw(result.details), indent=2, default=str)
            if result.outcome == "error":
                parts.append(_element("error", _error_type(result.error or ""), message, body))
            else:
                parts.append(_element("failure", result.kind, message, body))
    if not parts and case.outcome == "error":
        # Only an advisory grader errored, and its error ended the case (`fail_on_error`).
        for index, record in advisory_errors(case):
            message = f"turn {index}: {record.result.name} (advisory): {result_text(record)}"
            kind = _error_type(record.result.error or "")
            parts.append(_element("error", kind, message, message))
        if not parts:
            parts.append(_element("error", "Error", "the case errored", "the case errored"))
    if not parts and case.outcome == "fail":
        message = f"the case's policy did not pass (score {case.score:g})"
        parts.append(_element("failure", "policy", message, message))
    if skipped:
        note = "turns not run because an earlier error ended the case: " + ", ".join(
            str(index) for index in skipped
        )
        if parts:
            parts.append(f"      <system-out>{_text(note)}</system-out>\n")
        else:
            parts.append(f'      <skipped message="{_attr(note)}"/>\n')
    status = case.outcome
    if status == "pass" and skipped:
        status = "skipped"
    head = (
        f'    <testcase name="{_attr(case.name)}" classname="{_attr(classname)}" '
        f'time="{_seconds(case.duration_ms)}"'
    )
    if not parts:
        return head + "/>\n", status
    return head + ">\n" + "".join(parts) + "    </testcase>\n", status


def write_junit(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport] | None = None,
) -> None:
    """Write `report` as JUnit XML to `path`, atomically.

    `cases` replaces `report.cases` when given (streamed from the JSONL log of a huge run).
    """
    counts = {"tests": 0, "fail": 0, "error": 0, "skipped": 0}
    with tempfile.TemporaryFile("w+", encoding="utf-8") as body:
        for case in report.cases if cases is None else cases:
            element, status = _testcase(case, report.suite)
            body.write(element)
            counts["tests"] += 1
            if status in counts:
                counts[status] += 1
        body.seek(0)
        with atomic_text(path) as out:
            _write_document(out, report, counts, body)


def _write_document(out: TextIO, report: SuiteReport, counts: dict[str, int], body: TextIO) -> None:
    timestamp = datetime.datetime.now().replace(microsecond=0).isoformat()
    hostname = socket.gethostname() or "localhost"
    totals = (
        f'tests="{counts["tests"]}" failures="{counts["fail"]}" errors="{counts["error"]}" '
        f'skipped="{counts["skipped"]}" time="{_seconds(report.duration_ms)}"'
    )
    name = _attr(report.suite)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f'<testsuites name="{name}" {totals}>\n')
    out.write(
        f'  <testsuite name="{name}" {totals} timestamp="{timestamp}" '
        f'hostname="{_attr(hostname)}">\n'
    )
    if not report.complete:
        out.write(
            '    <properties>\n      <property name="gradekit.complete" value="false"/>\n'
            "    </properties>\n"
        )
    shutil.copyfileobj(body, out)
    out.write("  </testsuite>\n</testsuites>\n")
