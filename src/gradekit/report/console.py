"""What `gradekit run` shows in the terminal: progress while grading, a summary at the end.

rich draws the progress bar and the tables when it is installed (`pip install gradekit[cli]`);
without it the same information is printed as plain text. rich is imported here, inside the
functions that use it, never by `import gradekit`.
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from gradekit.report._pass_at_k_text import summary_line
from gradekit.report._text import duration, failing_lines, graded_rate, percent
from gradekit.report.attempts import case_label
from gradekit.report.model import CaseReport, SuiteReport, Summary

__all__ = ["Progress", "one_line_summary", "print_summary", "print_table"]

# A count, a score, a percentage, a duration, or "-" (nothing to count): aligned right.
_NUMBER = re.compile(r"-|\d[\d.,]*(%| s)?")


def _rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


class Progress:
    """Cases done (of the total, when known), rate and elapsed time, drawn on `stream`.

    Draws only when `enabled`; `advance(n)` may be called from any thread.
    """

    def __init__(self, total: int | None, *, enabled: bool, stream: TextIO = sys.stderr) -> None:
        self._total = total
        self._enabled = enabled
        self._stream = stream
        self._start = time.monotonic()
        self._done = 0
        self._lock = threading.Lock()
        self._last_draw = 0.0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self._enabled and _rich():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import (
                Progress as Bar,
            )

            self._bar = Bar(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn() if self._total is not None else TextColumn("{task.completed}"),
                TextColumn("cases"),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                console=Console(file=self._stream),
            )
            self._task = self._bar.add_task("grading", total=self._total, rate="")
            self._bar.start()
        return self

    def advance(self, count: int = 1) -> None:
        """Count `count` more cases as done."""
        if not self._enabled:
            return
        with self._lock:
            self._done += count
            now = time.monotonic()
            rate = f"{self._done / max(now - self._start, 1e-9):.1f}/s"
            if self._bar is not None:
                self._bar.update(self._task, advance=count, rate=rate)
            elif now - self._last_draw >= 0.1:
                self._last_draw = now
                self._draw_plain(now, rate)

    def _draw_plain(self, now: float, rate: str) -> None:
        total = "" if self._total is None else f"/{self._total}"
        elapsed = time.strftime("%H:%M:%S", time.gmtime(now - self._start))
        self._stream.write(f"\rgrading {self._done}{total} cases  {rate}  {elapsed} ")
        self._stream.flush()

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self._enabled:
            self._draw_plain(time.monotonic(), f"{self._done / max(self.elapsed, 1e-9):.1f}/s")
            self._stream.write("\n")
            self._stream.flush()

    @property
    def enabled(self) -> bool:
        """Whether it draws anything."""
        return self._enabled

    @property
    def elapsed(self) -> float:
        """Seconds since the progress started."""
        return time.monotonic() - self._start


def one_line_summary(report: SuiteReport) -> str:
    """`gradekit: NAME: N cases: P passed, F failed, E errored (R pass rate) in S s`."""
    s = report.summary
    state = "" if report.complete else " (interrupted)"
    graded = graded_rate(s)
    beside = "" if graded is None else f"; {graded} of the graded cases"
    return (
        f"gradekit: {report.suite}: {s.cases} cases: {s.passed} passed, {s.failed} failed, "
        f"{s.errored} errored ({percent(s.pass_rate)} pass rate{beside}) in "
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
                "-" if grader.mean_score is None else f"{grader.mean_score:.3f}",
            ]
        )
    return rows


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], stream: TextIO
) -> None:
    """A table with rich when installed, else aligned plain text. Numbers align right."""
    numeric = [all(_NUMBER.fullmatch(row[i]) for row in rows) for i in range(len(headers))]
    if _rich():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for header, right in zip(headers, numeric, strict=True):
            table.add_column(header, justify="right" if right else "left")
        for row in rows:
            table.add_row(*row)
        Console(file=stream, highlight=False).print(table)
        return
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.rjust(w) if right else cell.ljust(w)
            for cell, w, right in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    stream.write(f"{title}\n{line(headers)}\n{line(['-' * w for w in widths])}\n")
    stream.writelines(line(row) + "\n" for row in rows)


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
    row = [str(s.cases), str(s.passed), str(s.failed), str(s.errored), percent(s.pass_rate)]
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
    if s.pass_at_k is not None:
        stream.write(f"\n{summary_line(s.pass_at_k)}\n")
        stream.writelines(f"  note: {note}\n" for note in s.pass_at_k.notes)
    shown = list(itertools.islice(failing, limit))
    if shown:
        count = s.failed + s.errored
        more_failing = count - len(shown)
        stream.write(f"\ncases that did not pass ({count}):\n")
        for case in shown:
            stream.write(f"  {case.outcome.upper():5}  {case_label(case.name, case.attempt)}\n")
            stream.writelines(f"         {line}\n" for line in failing_lines(case))
        if more_failing:
            stream.write(f"  ... and {more_failing} more (see the reports)\n")
    stream.flush()
