"""Small text helpers shared by the console, Markdown and JUnit writers."""

from __future__ import annotations

from gradekit.report._escaped import escaped
from gradekit.report.model import CaseReport, ResultRecord, Summary

__all__ = [
    "advisory_errors",
    "duration",
    "failing_lines",
    "graded_rate",
    "one_line",
    "percent",
    "points",
    "result_text",
]


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis: each run of white
    space (newlines included) one space, every other control character its escape (`\\x1b`,
    `escaped`)."""
    flat = escaped(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def duration(milliseconds: float) -> str:
    """A run's duration for people: `840 ms` under a second, else `12.3 s`."""
    if milliseconds < 1000.0:
        return f"{milliseconds:.0f} ms"
    return f"{milliseconds / 1000:.1f} s"


def _tenths(share: float) -> str:
    """`share` (0 to 1) in percent to one decimal, unsigned; a share short of 1 never as 100.0
    nor one above 0 as 0.0 (99.9 and 0.1 instead): 1 failing case of 2,000 is not a run that
    passed, nor 1 passing case of 2,000 a run none of whose cases passed."""
    text = f"{share * 100:.1f}"
    if text == "100.0" and share < 1.0:
        return "99.9"
    if text == "0.0" and share > 0.0:
        return "0.1"
    return text


def percent(value: float | None) -> str:
    """A rate for people: `0.875` as `87.5%`, `0.9995` as `99.9%` (only 1 is `100.0%`),
    `0.0004` as `0.1%` (only 0 is `0.0%`); None (nothing to count) as `-`. Every report prints
    its rates with it."""
    return "-" if value is None else f"{_tenths(value)}%"


def points(change: float) -> str:
    """A change of rate in percentage points, signed, by the rule of `percent`: `-0.0005` as
    `-0.1`, `-0.9995` as `-99.9` (only no change is `+0.0`)."""
    return ("-" if change < 0 else "+") + _tenths(abs(change))


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
                f"turn {turn.index}: {escaped(record.result.name)} {label}: "
                f"{one_line(result_text(record))}"
            )
    if case.outcome == "error" and not any(" error: " in line for line in lines):
        # No verdict result errored: an advisory grader's error ended the case.
        lines[:0] = [
            f"turn {index}: {escaped(record.result.name)} error (advisory): "
            f"{one_line(result_text(record))}"
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
