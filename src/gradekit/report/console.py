"""What `gradekit run` shows in the terminal at the end: the summary (progress while it runs
is `gradekit.report.progress`), and the tables it and `gradekit kinds` draw. rich is imported
only inside the functions that use it, never by `import gradekit`. FAIL and ERROR are coloured
as `gradekit.report.progress` allows. Against a baseline, its marks (`print_baseline`).

A table on the console: drawn by rich on a terminal, aligned plain text elsewhere.

rich draws the table when it is installed (`pip install gradekit[cli]`) and the stream is a
terminal, or colour is forced (`FORCE_COLOR`, for CI logs that render it). A pipe or a file
gets aligned plain text, one row a line, which `grep`, `awk` and `cut` read as they are; so
does a terminal without rich, and a table of more than `LONG_TABLE` rows: rich lays out a
table cell by cell (with its import, about half the time of `gradekit kinds` with 200 plugins
installed: bench/RESULTS.md), and a listing that long scrolls past the
screen anyway. Cells are text as given: a name such as `[red]` or `:smile:` is shown as
written, never read as rich's markup or emoji codes.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

from gradekit.report import progress as terminal
from gradekit.report.attempts import case_label, summary_line
from gradekit.report.marks import Marks, listed
from gradekit.report.model import CaseReport, SuiteReport, Summary, failing_lines, graded_rate
from gradekit.report.text import (
    duration,
    escaped,
    interval_text,
    percent,
    rate_with_interval,
    score_with_interval,
)

__all__ = [
    "LONG_TABLE",
    "counts_line",
    "one_line_summary",
    "print_baseline",
    "print_summary",
    "print_table",
]


LONG_TABLE = 50
"""Tables of more rows than this are aligned plain text even on a terminal (see above)."""

# A count, a score, a percentage, a duration, or "-" (nothing to count): aligned right.
_NUMBER = re.compile(r"-|\d[\d.,]*(%| s| ms)?")


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], stream: TextIO
) -> None:
    """`rows` under `headers`, titled, on `stream` (see the module's rules). Numbers align
    right; control characters show as escapes (`escaped`)."""
    title, headers = escaped(title), [escaped(header) for header in headers]
    rows = [[escaped(cell) for cell in row] for row in rows]
    numeric = [all(_NUMBER.fullmatch(row[i]) for row in rows) for i in range(len(headers))]
    if len(rows) <= LONG_TABLE and terminal.draws_tables(stream) and terminal.rich_installed():
        from rich.table import Table
        from rich.text import Text

        table = Table(title=Text(title, style="table.title"), title_justify="left")
        for header, right in zip(headers, numeric, strict=True):
            table.add_column(Text(header), justify="right" if right else "left")
        for row in rows:
            table.add_row(*map(Text, row))
        terminal.rich_console(stream).print(table)
        return
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.rjust(w) if right else cell.ljust(w)
            for cell, w, right in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    stream.write(f"{title}\n{line(headers)}\n{line(['-' * w for w in widths])}\n")
    stream.writelines(line(row) + "\n" for row in rows)


def one_line_summary(report: SuiteReport, *, colour: bool = False) -> str:
    """`gradekit: NAME: N cases: P passed, F failed, E errored (R pass rate) in S s`; with
    `colour`, the failed and errored counts coloured when not zero."""
    s = report.summary
    state = "" if report.complete else " (interrupted)"
    graded = graded_rate(s)
    beside = "" if graded is None else f"; {graded} of the graded cases"
    shown = interval_text(s.pass_rate_interval, s.interval_level)
    ci = f", {shown}" if shown else ""
    failed = terminal.paint(f"{s.failed} failed", "fail", colour and s.failed > 0)
    errored = terminal.paint(f"{s.errored} errored", "error", colour and s.errored > 0)
    return (
        f"gradekit: {escaped(report.suite)}: {s.cases} cases: {s.passed} passed, {failed}, "
        f"{errored} ({percent(s.pass_rate)} pass rate{ci}{beside}) in "
        f"{duration(report.duration_ms)}{state}"
    )


def _grader_rows(summary: Summary) -> list[list[str]]:
    rows = []
    for name, grader in summary.graders.items():
        rows.append(
            [
                name,
                str(grader.passed),
                str(grader.failed),
                str(grader.errored),
                percent(grader.pass_rate),
                score_with_interval(
                    grader.mean_score, grader.mean_score_interval, summary.interval_level
                ),
            ]
        )
    return rows


def print_summary(
    report: SuiteReport,
    failing: Iterable[CaseReport],
    stream: TextIO = sys.stdout,
    *,
    limit: int = 20,
) -> None:
    """The end-of-run summary: case counts, per-grader figures, and why cases did not pass.

    `failing`: the cases that did not pass, in suite order; the first `limit` are listed (and
    only those are read), the rest counted from the summary.
    """
    s = report.summary
    verdict = "interrupted" if not report.complete else ("passed" if report.passed else "failed")
    headers = ["cases", "passed", "failed", "errored", "pass rate", "duration"]
    rate = rate_with_interval(s.pass_rate, s.pass_rate_interval, s.interval_level)
    row = [str(s.cases), str(s.passed), str(s.failed), str(s.errored), rate]
    graded = graded_rate(s)
    if graded is not None:
        headers.insert(5, "graded pass rate")
        row.append(graded)
    row.append(duration(report.duration_ms))
    print_table(f"gradekit: {report.suite} {verdict}", headers, [row], stream)
    if s.graders:
        print_table(
            "graders",
            ["grader", "passed", "failed", "errored", "pass rate", "mean score"],
            _grader_rows(s),
            stream,
        )
    marks = report.baseline
    if marks is not None:
        print_baseline(marks, stream, limit=limit)
    if s.pass_at_k is not None:
        stream.write(f"\n{summary_line(s.pass_at_k)}\n")
        stream.writelines(f"  note: {note}\n" for note in s.pass_at_k.notes)
    shown = list(itertools.islice(failing, limit))
    if shown:
        count = s.failed + s.errored
        more_failing = count - len(shown)
        stream.write(f"\ncases that did not pass ({count}):\n")
        coloured = terminal.colour(stream)
        for case in shown:
            mark = "" if marks is None else marks.mark(case)
            said = f"  ({mark})" if mark in ("regressed", "new") else ""
            label = terminal.paint(f"{case.outcome.upper():5}", case.outcome, coloured)
            stream.write(f"  {label}  {escaped(case_label(case.name, case.attempt))}{said}\n")
            stream.writelines(f"         {line}\n" for line in failing_lines(case))
        if more_failing:
            stream.write(f"  ... and {more_failing} more (see the reports)\n")
    stream.flush()


def counts_line(marks: Marks) -> str:
    """`1 regressed, 1 fixed, 2 new, 3 unchanged (1 still failing), 1 removed`."""
    counts = marks.counts
    still = f" ({marks.still_failing} still failing)" if marks.still_failing else ""
    return (
        f"{counts['regressed']} regressed, {counts['fixed']} fixed, {counts['new']} new, "
        f"{counts['unchanged']} unchanged{still}, {marks.removed} removed"
    )


def print_baseline(marks: Marks, stream: TextIO, *, limit: int = 20) -> None:
    """The console's lines: the counts, then the cases regressed, fixed, new and removed
    (the first `limit` of each)."""
    source = escaped(marks.source or "the baseline")
    stream.write(f"\ncompared with {source}: {counts_line(marks)}\n")
    line = marks.verdict
    if line is not None:
        stream.write(f"{line}\n")
    for mark, _, count, names in listed(marks):
        if not count:
            continue
        stream.write(f"{mark} ({count}):\n")
        stream.writelines(f"  {escaped(name)}\n" for name in names[:limit])
        if count > min(limit, len(names)):
            stream.write(f"  ... and {count - min(limit, len(names))} more (see the reports)\n")
