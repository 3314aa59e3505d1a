"""JUnit XML, the format CI systems read: one testsuite per suite, one testcase per case.

A failed case holds one `<failure>`, an errored case (a grader that errored, or a case that
could not be loaded) one `<error>`: one status element a testcase, so that the tools that
recount them agree with the testsuite's counts of cases; its message and text name every failed
and errored result. A case that did not pass also gets a `<system-out>` with the sample each failing
turn graded (input, output, expected, tool calls, transcript) when the report carries it, else
the failing results' messages. A turn not run because an earlier error ended its case is a
testcase of its own, `CASE [turn N]`, holding a `<skipped>`: CI systems give a testcase one
status and Jenkins ranks `skipped` above `error`, so a `<skipped>` in the case's testcase would
hide the error that ended it. The run's environment (versions, the suite's hash, who provided
each kind) is in the testsuite's `<properties>`.

The document follows the JUnit schema of Jenkins' xunit plugin (junit-10.xsd), which the other
readers accept too: `<testsuites>` carries only name, tests, failures, errors and time.
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
from typing import Final, TextIO

import attrs

from gradekit.core.types import thaw
from gradekit.report.attempts import case_label, junit_properties
from gradekit.report.files import atomic_text
from gradekit.report.model import (
    CaseReport,
    SuiteReport,
    advisory_errors,
    failing_lines,
    failing_samples,
    result_text,
)
from gradekit.report.text import (
    escape_character,
    one_line,
    rate_with_interval,
    score_with_interval,
)

__all__ = ["write_junit"]

# Characters XML 1.0 cannot carry at all, even escaped (lone surrogates cannot even be
# written as UTF-8): each becomes its escape (`\x07`, `\ud800`), in element text and in
# attributes alike, the form the messages' `one_line` gives them too.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    clean = _INVALID_XML.sub(escape_character, value)
    escaped = clean.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # A raw carriage return would be read back as a newline.
    escaped = escaped.replace("\r", "&#13;")
    # Every character beyond ASCII as a character reference: the file is ASCII, which every
    # reader decodes alike. Readers that guess the encoding instead of reading the XML
    # declaration (xunit-viewer: a UTF-8 decoding that holds U+FFFD is "not UTF-8", and the
    # words' language then picks CP1252, which Node cannot decode) would misread UTF-8.
    return escaped.encode("ascii", "xmlcharrefreplace").decode("ascii")


def _attr(value: str) -> str:
    escaped = _text(value).replace('"', "&quot;")
    return escaped.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")


def _seconds(milliseconds: float) -> str:
    return f"{max(milliseconds, 0.0) / 1000:.3f}"


_LOAD_ERROR: Final = "ConfigError"
"""The `type` of a case that could not be loaded (a malformed dataset line, a bad entry)."""


def _error_type(error: str) -> str:
    head, _, _ = error.partition(":")
    return head if head and " " not in head else "Error"


def _element(tag: str, kind: str, message: str, body: str) -> str:
    return (
        f'      <{tag} type="{_attr(kind)}" message="{_attr(one_line(message))}">'
        f"{_text(body)}</{tag}>\n"
    )


def _system_out(case: CaseReport) -> str:
    """What the agent was given and did in each turn that did not pass, when the report
    carries the samples; else why the case did not pass, one line a result."""
    blocks = failing_samples(case)
    reasons = failing_lines(case)
    if blocks:
        return "\n\n".join([*blocks, "\n".join(reasons)])
    return "\n".join(reasons)


@attrs.frozen
class _Problem:
    """A failed or errored result of a case (or its own error): one entry of its status."""

    error: bool
    kind: str
    message: str
    body: str


def _problems(case: CaseReport) -> list[_Problem]:
    """What made a case not pass, in order: its own error, then each failed or errored
    non-advisory result, turn by turn (an errored case none of whose verdict results errored:
    the advisory errors that ended it)."""
    found: list[_Problem] = []
    if case.error is not None:
        # A case that could not be loaded: its error starts with its place (`data.jsonl:2:`).
        found.append(_Problem(True, _LOAD_ERROR, case.error, case.error))
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
                found.append(_Problem(True, _error_type(result.error or ""), message, body))
            else:
                found.append(_Problem(False, result.kind, message, body))
    if case.outcome == "error" and not any(problem.error for problem in found):
        # Only an advisory grader errored, and its error ended the case (`fail_on_error`).
        for index, record in advisory_errors(case):
            message = f"turn {index}: {record.result.name} (advisory): {result_text(record)}"
            found.append(_Problem(True, _error_type(record.result.error or ""), message, message))
        if not any(problem.error for problem in found):
            found.append(_Problem(True, "Error", "the case errored", "the case errored"))
    if not found and case.outcome == "fail":
        message = f"the case's policy did not pass (score {case.score:g})"
        found.append(_Problem(False, "policy", message, message))
    return found


def _status(case: CaseReport) -> str:
    """The one status element of a case that did not pass: an `<error>` for an errored case, a
    `<failure>` for a failed one (CI tools count a testcase's elements: one each, so their
    counts are the cases'). Its message and text name every failed and errored result; its
    type is the first error's class (or the first failing result's kind)."""
    problems = _problems(case)
    errored = case.outcome == "error"
    first = next((p for p in problems if p.error == errored), problems[0])
    if len(problems) == 1:
        message = first.message
    else:
        message = f"{len(problems)} results did not pass: " + "; ".join(
            one_line(p.message) for p in problems
        )
    body = "\n\n".join(p.body for p in problems)
    return _element("error" if errored else "failure", first.kind, message, body)


def _head(name: str, classname: str, milliseconds: float) -> str:
    return (
        f'    <testcase name="{_attr(name)}" classname="{_attr(classname)}" '
        f'time="{_seconds(milliseconds)}"'
    )


def _testcases(case: CaseReport, classname: str, mark: str = "") -> Iterable[tuple[str, str]]:
    """The `<testcase>` elements of a case, each with its status (pass, fail, error, skipped):
    the case's own, then one per turn its case's error left unrun. `mark`: the case's mark
    against a baseline, said first in the `<system-out>` of a case that did not pass."""
    skipped = [turn.index for turn in case.turns if turn.skipped]
    label = case_label(case.name, case.attempt)
    head = _head(label, classname, case.duration_ms)
    if case.outcome == "pass" and skipped and len(skipped) == len(case.turns):
        note = "not run: no turn of the case ran"
        yield f'{head}>\n      <skipped message="{_attr(note)}"/>\n    </testcase>\n', "skipped"
        return
    if case.outcome == "pass":
        yield head + "/>\n", "pass"
    else:
        parts = [_status(case)]
        said = f"baseline: {mark}\n" if mark else ""
        parts.append(f"      <system-out>{_text(said + _system_out(case))}</system-out>\n")
        yield head + ">\n" + "".join(parts) + "    </testcase>\n", case.outcome
    note = "not run: an earlier error ended the case (fail_on_error)"
    for index in skipped:
        element = _head(f"{label} [turn {index}]", classname, 0.0)
        element += f'>\n      <skipped message="{_attr(note)}"/>\n    </testcase>\n'
        yield element, "skipped"


def write_junit(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport] | None = None,
) -> None:
    """Write `report` as JUnit XML to `path`, atomically.

    `cases` replaces `report.cases` when given (streamed from the JSONL log of a huge run):
    `CaseReport`s or their JSON forms, whose samples go into failing cases' `<system-out>`.
    """
    counts = {"tests": 0, "fail": 0, "error": 0, "skipped": 0}
    marks = report.baseline
    changed: list[tuple[str, str]] = []  # (case, mark) of each case marked other than unchanged
    with tempfile.TemporaryFile("w+", encoding="utf-8") as body:
        for item in report.cases if cases is None else cases:
            mark = "" if marks is None else marks.mark(item)
            if mark and mark != "unchanged":
                changed.append((case_label(item.name, item.attempt), mark))
            for element, status in _testcases(item, report.suite, mark):
                body.write(element)
                counts["tests"] += 1
                if status in counts:
                    counts[status] += 1
        body.seek(0)
        with atomic_text(path) as out:
            _write_document(out, report, counts, body, _properties(report, changed))


def _properties(report: SuiteReport, changed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The testsuite's properties: whether the run is incomplete, what made the report (versions,
    the suite's hash, each kind's pack); with a baseline, its path,
    the count of each mark and each case marked other than unchanged (`gradekit.baseline:NAME`
    = its mark). Jenkins' schema allows properties on the testsuite only, not on a testcase."""
    found = [] if report.complete else [("gradekit.complete", "false")]
    if report.environment is not None:
        found += report.environment.properties()
    summary = report.summary
    level = summary.interval_level
    found.append(
        (
            "gradekit.pass_rate",
            rate_with_interval(summary.pass_rate, summary.pass_rate_interval, level),
        )
    )
    found += [
        (
            f"gradekit.grader.{name}.mean_score",
            score_with_interval(grader.mean_score, grader.mean_score_interval, level),
        )
        for name, grader in summary.graders.items()
        if grader.mean_score is not None
    ]
    if report.summary.pass_at_k is not None:
        found += junit_properties(report.summary.pass_at_k)
    marks = report.baseline
    if marks is not None:
        found.append(("gradekit.baseline", marks.source))
        counts = marks.to_dict().items()
        found += [
            (f"gradekit.baseline.{key}", str(n))
            for key, n in counts
            if key not in ("report", "statistics")
        ]
        line = marks.verdict
        if line is not None:
            found.append(("gradekit.baseline.verdict", line))
        found += [(f"gradekit.baseline:{name}", mark) for name, mark in changed]
    return found


def _write_document(
    out: TextIO,
    report: SuiteReport,
    counts: dict[str, int],
    body: TextIO,
    properties: list[tuple[str, str]],
) -> None:
    timestamp = datetime.datetime.now().replace(microsecond=0).isoformat()
    hostname = socket.gethostname() or "localhost"
    totals = f'tests="{counts["tests"]}" failures="{counts["fail"]}" errors="{counts["error"]}"'
    time = f'time="{_seconds(report.duration_ms)}"'
    name = _attr(report.suite)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    # No `skipped` here: Jenkins' schema allows it on <testsuite> only.
    out.write(f'<testsuites name="{name}" {totals} {time}>\n')
    out.write(
        f'  <testsuite name="{name}" {totals} skipped="{counts["skipped"]}" {time} '
        f'timestamp="{timestamp}" hostname="{_attr(hostname)}">\n'
    )
    if properties:
        out.write("    <properties>\n")
        for key, value in properties:
            out.write(f'      <property name="{_attr(key)}" value="{_attr(value)}"/>\n')
        out.write("    </properties>\n")
    shutil.copyfileobj(body, out)
    out.write("  </testsuite>\n</testsuites>\n")
