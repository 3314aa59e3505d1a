"""A Markdown summary a CI job can post on a pull request: verdict, counts, graders, failures."""

from __future__ import annotations

import os
from collections.abc import Iterable

from gradekit.report._atomic import atomic_text
from gradekit.report._text import duration, failing_lines, graded_rate, percent
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["MAX_LISTED", "render_markdown", "write_markdown"]

MAX_LISTED = 50
"""At most this many failing cases are listed; the rest are counted."""


def _cell(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return escaped.replace("<", "&lt;").replace(">", "&gt;")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def render_markdown(report: SuiteReport, cases: Iterable[CaseReport] | None = None) -> str:
    """The Markdown text of the summary (failing cases listed from `cases`)."""
    summary = report.summary
    if not report.complete:
        verdict = "⚠️ interrupted"
    elif report.passed:
        verdict = "✅ passed"
    else:
        verdict = "❌ failed"
    graded = graded_rate(summary)
    extra_head, extra_rule, extra_cell = (
        ("", "", "") if graded is None else (" Graded pass rate |", " ---: |", f" {graded} |")
    )
    lines = [
        f"## gradekit: {_cell(report.suite)} {verdict}",
        "",
        f"| Cases | Passed | Failed | Errored | Pass rate |{extra_head} Duration |",
        f"| ---: | ---: | ---: | ---: | ---: |{extra_rule} ---: |",
        f"| {summary.cases} | {summary.passed} | {summary.failed} | {summary.errored} "
        f"| {percent(summary.pass_rate)} |{extra_cell} {duration(report.duration_ms)} |",
        "",
    ]
    if summary.graders:
        lines += [
            "| Grader | Passed | Failed | Errored | Pass rate | Mean score |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, grader in summary.graders.items():
            rate = grader.pass_rate
            mean = "-" if grader.mean_score is None else f"{grader.mean_score:.3f}"
            lines.append(
                f"| {_cell(name)} | {grader.passed} | {grader.failed} | {grader.errored} "
                f"| {percent(rate)} | {mean} |"
            )
        lines.append("")
    listed = 0
    more = 0
    failing: list[str] = []
    for case in report.cases if cases is None else cases:
        if case.outcome == "pass":
            continue
        if listed >= MAX_LISTED:
            more += 1
            continue
        listed += 1
        failing.append(f"- **{_cell(case.name)}** ({case.outcome})")
        failing.extend(f"  - {_code(line)}" for line in failing_lines(case))
    if failing:
        lines += ["### Cases that did not pass", "", *failing]
        if more:
            lines.append(f"- … and {more} more")
        lines.append("")
    return "\n".join(lines)


def write_markdown(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport] | None = None,
) -> None:
    """Write the Markdown summary of `report` to `path`, atomically."""
    text = render_markdown(report, cases)
    with atomic_text(path) as out:
        out.write(text)
