"""Small text helpers shared by the console, Markdown and JUnit writers."""

from __future__ import annotations

from gradekit.report._escaped import escaped
from gradekit.report.model import CaseReport, ResultRecord, Summary
from gradekit.history.statistics import PairedStatistics

__all__ = [
    "advisory_errors",
    "duration",
    "failing_lines",
    "graded_rate",
    "interval_text",
    "level_text",
    "one_line",
    "percent",
    "points",
    "rate_with_interval",
    "result_text",
    "score_with_interval",
    "verdict_line",
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


def level_text(level: float) -> str:
    """A confidence level for people: `0.95` as `95%`, `0.999` as `99.9%`."""
    return f"{round(level * 100, 6):g}%"


def interval_text(interval: tuple[float, float] | None, level: float) -> str:
    """An interval of a rate in percent: `95% CI 76.1-86.7` (empty for None)."""
    if interval is None:
        return ""
    return f"{level_text(level)} CI {_tenths(interval[0])}-{_tenths(interval[1])}"


def rate_with_interval(
    rate: float | None, interval: tuple[float, float] | None, level: float
) -> str:
    """A rate and its interval, as every report shows the pass rate: `82.0% (95% CI
    76.1-86.7)`; the rate alone when it has no interval."""
    shown = interval_text(interval, level)
    return percent(rate) if not shown else f"{percent(rate)} ({shown})"


def score_with_interval(
    mean: float | None, interval: tuple[float, float] | None, level: float
) -> str:
    """A mean score and its interval: `0.500 (95% CI 0.095-0.905)`; `-` for no score."""
    if mean is None:
        return "-"
    if interval is None:
        return f"{mean:.3f}"
    return f"{mean:.3f} ({level_text(level)} CI {interval[0]:.3f}-{interval[1]:.3f})"


def _p_text(p_value: float) -> str:
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.2g}"


def verdict_line(
    base_rate: float | None,
    new_rate: float | None,
    statistics: PairedStatistics,
    *,
    all_paired: bool = True,
) -> str:
    """A comparison in one line, as the console, Markdown and HTML say it: `pass rate 80.0% ->
    74.5%: -5.5 points (95% CI -9.8 to -1.2), 16 regressed / 5 fixed, McNemar p = 0.027:
    worse`. The rates are over each run's cases, the change, its interval and the test over
    the cases in both: when, `all_paired` False, some case is in one run only, the line gives
    the change of the rates, then the paired figures `over the N cases in both runs`."""
    head = f"pass rate {percent(base_rate)} -> {percent(new_rate)}"
    s = statistics
    if s.pass_rate_change is None:
        return f"{head}: no case in both runs to compare"
    if not all_paired:
        if base_rate is not None and new_rate is not None:
            head += f" ({points(new_rate - base_rate)} points)"
        noun = "case" if s.paired == 1 else "cases"
        head += f"; over the {s.paired} {noun} in both runs"
    parts = [f"{points(s.pass_rate_change)} points"]
    interval = s.pass_rate_change_interval
    if interval is not None:
        low, high = interval
        parts[0] += f" ({level_text(s.interval_level)} CI {points(low)} to {points(high)})"
    parts.append(f"{s.regressed} regressed / {s.fixed} fixed")
    if s.p_value is None:
        parts.append("too few paired cases for a test")
    else:
        test = "McNemar" if s.test == "mcnemar-exact" else "paired t"
        parts.append(f"{test} {_p_text(s.p_value)}")
    return f"{head}: {', '.join(parts)}: {s.verdict}"


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
