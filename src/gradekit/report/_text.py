"""Small text helpers shared by the console, Markdown and JUnit writers."""

from __future__ import annotations

import re

from gradekit.report.model import CaseReport, ResultRecord, Summary

__all__ = [
    "advisory_errors",
    "duration",
    "failing_lines",
    "graded_rate",
    "one_line",
    "percent",
    "result_text",
]

_CONTROL = re.compile("[\x00-\x1f\x7f]")


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(_CONTROL.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def duration(milliseconds: float) -> str:
    """A run's duration for people: `840 ms` under a second, else `12.3 s`."""
    if milliseconds < 1000.0:
        return f"{milliseconds:.0f} ms"
    return f"{milliseconds / 1000:.1f} s"


def percent(value: float | None) -> str:
    """`0.875` as `87.5%`; None (nothing to count) as `-`."""
    return "-" if value is None else f"{value * 100:.1f}%"


def graded_rate(summary: Summary) -> str | None:
    """The pass rate over the graded cases, shown beside the pass rate (over all cases) when
    some case errored; None when no case errored (the two rates are then the same)."""
    return percent(summary.graded_pass_rate) if summary.errored else None


def result_text(record: ResultRecord) -> str:
    """What a result says about itself: its error, else its message, else its score."""
    result = record.result
    if result.error is not None:
        # The message often repeats the error without its class name: say it once.
        if result.message in result.error:
            return result.error
        return f"{result.error} ({result.message})"
    return result.message or f"score {result.score:g}"


def failing_lines(case: CaseReport) -> list[str]:
    """Why `case` did not pass: one line per failing or errored non-advisory result,
    `turn N: grader: message`, or the case's own error when it could not be loaded."""
    lines: list[str] = []
    if case.error is not None:
        lines.append(one_line(case.error))
    for turn in case.turns:
        if turn.skipped:
            lines.append(f"turn {turn.index}: skipped (an earlier error ended the case)")
            continue
        for record in turn.results:
            if record.advisory or record.result.outcome == "pass":
                continue
            label = "error" if record.result.outcome == "error" else "failed"
            lines.append(
                f"turn {turn.index}: {record.result.name} {label}: {one_line(result_text(record))}"
            )
    if case.outcome == "error" and not any(" error: " in line for line in lines):
        # No verdict result errored: an advisory grader's error ended the case.
        lines[:0] = [
            f"turn {index}: {record.result.name} error (advisory): {one_line(result_text(record))}"
            for index, record in advisory_errors(case)
        ]
    if not lines and case.outcome == "fail":
        lines.append("the case's policy did not pass")
    return lines


def advisory_errors(case: CaseReport) -> list[tuple[int, ResultRecord]]:
    """`(turn index, record)` of every advisory result of `case` that errored."""
    return [
        (turn.index, record)
        for turn in case.turns
        for record in turn.results
        if record.advisory and record.result.outcome == "error"
    ]
