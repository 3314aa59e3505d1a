"""The terminal while a run goes: progress on stderr, and the one place that decides what
the console may draw on a stream (colour, the live bar, how often plain lines come).

What the console may draw on a stream: the one place that decides colour, the live bar and
how often plain progress lines come.

- Colour (ANSI escape codes) when the stream is a terminal (and `TERM` is not `dumb`); never
  when `NO_COLOR` is set to a non-empty value (https://no-color.org), which wins over
  everything; `FORCE_COLOR` set to a non-empty value other than `0` forces it, on a pipe too
  (CI logs that render ANSI).
- Tables drawn (by rich, when installed) on a terminal, or where colour is forced; a pipe or
  a file gets aligned plain text (`gradekit.report.console`).
- A live progress bar only on a terminal, and not when `CI` is set to a true value (`true`,
  `1`, `yes`, `on`): CI logs keep every redraw, so they get a plain line every few seconds.
- A dumb terminal (`TERM=dumb`: Emacs' shell, some editors' consoles) is drawn on as a pipe
  is, in plain ASCII: no bar, no box characters, no colour unless forced; its tables are
  aligned plain text and its progress plain lines.
- Plain lines every `GRADEKIT_PROGRESS_INTERVAL` seconds (default 5).

Progress while `gradekit run` grades and while it writes the reports, on stderr.

On a terminal, a live bar: cases done of the total, passed / failed / errored, the rate, the
elapsed time and an ETA from the rate so far (`ETA --` for the first half second). In CI or on
a pipe (`gradekit.report.progress` decides), a plain line every few seconds instead, and one at
the end when any was printed. Writing each report prints a line when it starts and when it is
done, and the cases written so far while it lasts. rich draws the bar when it is installed;
it is imported here, only when a bar is drawn.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, TextIO

__all__ = [
    "PROGRESS_INTERVAL",
    "STYLES",
    "Progress",
    "ReportsProgress",
    "colour",
    "draws_bar",
    "draws_tables",
    "dumb_terminal",
    "eta_text",
    "in_ci",
    "paint",
    "progress_interval",
    "rich_console",
    "rich_installed",
]


PROGRESS_INTERVAL: Final = 5.0
"""Seconds between plain progress lines, unless GRADEKIT_PROGRESS_INTERVAL says otherwise."""

STYLES: Final = {"pass": "green", "fail": "red", "error": "yellow"}
"""Each outcome's colour, by its rich style name."""

_ANSI: Final = {"pass": "32", "fail": "31", "error": "33"}


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


def in_ci() -> bool:
    """Whether `CI` is set to a true value."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def dumb_terminal() -> bool:
    """Whether `TERM` is `dumb`: a terminal that shows plain ASCII text only."""
    return os.environ.get("TERM", "") == "dumb"


def draws_bar(stream: TextIO) -> bool:
    """Whether progress on `stream` is a live bar (a terminal that is not dumb, outside CI)
    rather than lines."""
    return _isatty(stream) and not in_ci() and not dumb_terminal()


def draws_tables(stream: TextIO) -> bool:
    """Whether tables on `stream` are drawn (by rich, with box characters) rather than written
    as aligned plain text: on a terminal that is not dumb, or on a pipe when colour is forced
    (`FORCE_COLOR`); never on a dumb terminal."""
    return not dumb_terminal() and (_isatty(stream) or colour(stream))


def colour(stream: TextIO) -> bool:
    """Whether text written to `stream` may carry colour (see the module's rules)."""
    if os.environ.get("NO_COLOR", ""):
        return False
    forced = os.environ.get("FORCE_COLOR", "")
    if forced and forced != "0":
        return True
    return _isatty(stream) and not dumb_terminal()


def paint(text: str, outcome: str, enabled: bool) -> str:
    """`text` in the colour of `outcome` (`pass`, `fail`, `error`) when `enabled`."""
    code = _ANSI.get(outcome)
    if not enabled or code is None:
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def progress_interval() -> float:
    """Seconds between plain progress lines: GRADEKIT_PROGRESS_INTERVAL when it is a positive
    number, else PROGRESS_INTERVAL."""
    try:
        seconds = float(os.environ.get("GRADEKIT_PROGRESS_INTERVAL", ""))
    except ValueError:
        return PROGRESS_INTERVAL
    return seconds if seconds > 0 else PROGRESS_INTERVAL


def rich_installed() -> bool:
    """Whether rich (the `cli` extra) can be imported: it draws the bar and the tables."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def rich_console(stream: TextIO) -> Any:
    """A rich Console on `stream` that colours (and styles) exactly when `colour` says so."""
    from rich.console import Console

    coloured = colour(stream)
    return Console(
        file=stream,
        highlight=False,
        color_system="auto" if coloured else None,
        force_terminal=True if coloured and not _isatty(stream) else None,
    )


_ETA_AFTER: Final = 0.5
"""Seconds of grading before the rate is trusted for an ETA."""


def eta_text(done: int, total: int | None, elapsed: float) -> str:
    """`ETA 1m42s` from the rate so far; `ETA --` until enough is known; "" with no total."""
    if total is None:
        return ""
    if done >= total:
        return "ETA 0s"
    if done == 0 or elapsed < _ETA_AFTER:
        return "ETA --"
    left = math.ceil((total - done) * elapsed / done)
    if left < 60:
        return f"ETA {left}s"
    if left < 3600:
        return f"ETA {left // 60}m{left % 60:02d}s"
    return f"ETA {left // 3600}h{left % 3600 // 60:02d}m"


def _percent(done: int, total: int) -> str:
    """Rounded down: 100% only once every case is done."""
    return f"{done * 100 // total}%"


class _Ticker:
    """Calls `draw()` every `interval` seconds from a thread of its own until stopped."""

    def __init__(self, interval: float, draw: Callable[[], None]) -> None:
        self._stop = threading.Event()
        self._interval = interval
        self._draw = draw
        self._thread = threading.Thread(target=self._loop, name="gradekit-progress", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self._draw()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class Progress:
    """Cases graded (of the total, when known) by outcome, the rate and an ETA, on `stream`.

    Draws only when `enabled`: a live bar when `draws_bar(stream)`, else plain lines.
    `advance(outcome)` may be called from any thread.
    """

    def __init__(self, total: int | None, *, enabled: bool, stream: TextIO = sys.stderr) -> None:
        self._total = total
        self._enabled = enabled
        self._stream = stream
        self.live = enabled and draws_bar(stream)
        """Whether a live bar is drawn (else lines, when enabled)."""
        self._colour = colour(stream)
        self._start = time.monotonic()
        self._counts = {"pass": 0, "fail": 0, "error": 0}
        self._done = 0
        self._lock = threading.Lock()
        self._last_draw = 0.0
        self._lines = 0
        self._bar: Any = None
        self._task: Any = None
        self._ticker: _Ticker | None = None

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        if self.live and rich_installed():
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            known = self._total is not None
            self._bar = Bar(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn() if known else TextColumn("{task.completed}"),
                TextColumn("cases"),
                TextColumn("{task.fields[counts]}"),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("{task.fields[eta]}"),
                console=rich_console(self._stream),
            )
            self._task = self._bar.add_task(
                "grading",
                total=self._total,
                counts=self._counts_text(markup=True),
                rate="",
                eta=eta_text(0, self._total, 0.0),
            )
            self._bar.start()
        elif self._enabled and not self.live:
            self._ticker = _Ticker(progress_interval(), self._line)
        return self

    def advance(self, outcome: str = "pass", count: int = 1) -> None:
        """Count one more case as done (or `count` more), with its outcome (`pass`, `fail`,
        `error`)."""
        if not self._enabled:
            return
        with self._lock:
            self._done += count
            self._counts[outcome] = self._counts.get(outcome, 0) + count
            if not self.live:
                return
            now = time.monotonic()
            if self._bar is not None:
                if now - self._last_draw >= 0.05 or self._done == self._total:
                    self._last_draw = now
                    self._bar.update(
                        self._task,
                        completed=self._done,
                        counts=self._counts_text(markup=True),
                        rate=self._rate(now),
                        eta=eta_text(self._done, self._total, now - self._start),
                    )
            elif now - self._last_draw >= 0.1:
                self._last_draw = now
                self._draw_plain(now)

    def _rate(self, now: float) -> str:
        return f"{self._done / max(now - self._start, 1e-9):,.1f}/s"

    def _counts_text(self, *, markup: bool = False) -> str:
        parts = []
        for outcome, word in (("pass", "passed"), ("fail", "failed"), ("error", "errored")):
            text = f"{self._counts[outcome]:,} {word}"
            if markup and self._counts[outcome] and outcome != "pass":
                text = f"[{STYLES[outcome]}]{text}[/]"
            elif not markup and self._counts[outcome] and outcome != "pass":
                text = paint(text, outcome, self._colour)
            parts.append(text)
        return ", ".join(parts)

    def _draw_plain(self, now: float) -> None:
        """The bar without rich: one line redrawn in place."""
        total = "" if self._total is None else f"/{self._total:,}"
        elapsed = time.strftime("%H:%M:%S", time.gmtime(now - self._start))
        eta = eta_text(self._done, self._total, now - self._start)
        self._stream.write(
            f"\rgrading {self._done:,}{total} cases  {self._counts_text()}  {self._rate(now)}  "
            f"{elapsed}  {eta} "
        )
        self._stream.flush()

    def _line(self) -> None:
        """A plain progress line (CI, a pipe)."""
        with self._lock:
            now = time.monotonic()
            elapsed = now - self._start
            done = f"{self._done:,}"
            if self._total is not None:
                share = f" ({_percent(self._done, self._total)})" if self._total else ""
                done = f"{self._done:,}/{self._total:,} cases{share}"
            else:
                done += " cases"
            rate = f"{self._done / max(elapsed, 1e-9):,.0f} cases/s"
            eta = eta_text(self._done, self._total, elapsed)
            tail = f", {eta}" if eta else ""
            self._stream.write(f"graded {done}: {self._counts_text()}, {rate}{tail}\n")
            self._stream.flush()
            self._lines += 1

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.update(
                self._task,
                completed=self._done,
                counts=self._counts_text(markup=True),
                rate=self._rate(time.monotonic()),
                eta=eta_text(self._done, self._total, self.elapsed),
            )
            self._bar.stop()
        elif self._ticker is not None:
            self._ticker.stop()
            if self._lines:  # the last line says where it ended
                self._line()
        elif self.live:
            self._draw_plain(time.monotonic())
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


class ReportsProgress:
    """Says on `stream` when each report is being written and when it is done; while it is
    written, the cases written so far (redrawn on a terminal, a line every few seconds in CI
    or on a pipe). `writing(path, total)` is the context of one report; it yields `tick`, to
    call once per case written. `reading(path)` is the same for a run read back from a file
    (a baseline, `compare`'s files), silent unless the reading lasts over `QUIET_SECONDS`
    (or the interval between plain lines, when shorter)."""

    QUIET_SECONDS: Final = 1.0
    """A file read back within this says nothing."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self._stream = stream
        self._live = draws_bar(stream)
        self._interval = progress_interval()

    def writing(
        self, path: str, total: int
    ) -> contextlib.AbstractContextManager[Callable[[], None]]:
        """Around the writing of the report at `path`, of `total` cases."""
        return self._activity("writing", "written", path, total, quiet=0.0)

    def reading(self, path: str) -> contextlib.AbstractContextManager[Callable[[], None]]:
        """Around the reading of a run's file at `path` (its number of cases unknown)."""
        quiet = min(self.QUIET_SECONDS, self._interval)
        return self._activity("reading", "read", path, 0, quiet=quiet)

    @contextlib.contextmanager
    def _activity(
        self, verb: str, done_word: str, path: str, total: int, quiet: float
    ) -> Iterator[Callable[[], None]]:
        out = self._stream
        start = time.monotonic()
        counted = 0
        last = start
        started = False  # the first line is written (at once, or once `quiet` has passed)
        shown = 0  # the length of the text last drawn after the path (a terminal)
        every = 0.1 if self._live else self._interval

        def begin() -> None:
            nonlocal started
            started = True
            out.write(f"{verb} {path} ..." if self._live else f"{verb} {path} ...\n")
            out.flush()

        if not quiet:
            begin()

        def tick() -> None:
            nonlocal counted, last, shown
            counted += 1
            if counted & 255:  # the clock is read once every 256 cases
                return
            now = time.monotonic()
            if not started:
                if now - start < quiet:
                    return
                begin()
            elif now - last < every:
                return
            last = now
            share = f" ({_percent(counted, total)})" if total else ""
            text = f"{counted:,}/{total:,} cases{share}" if total else f"{counted:,} cases"
            if self._live:
                out.write(f"\r{verb} {path} ... {text}")
                shown = len(text)
            else:
                out.write(f"{verb} {path}: {text} {done_word}\n")
            out.flush()

        ok = False
        try:
            yield tick
            ok = True
        finally:
            if started:
                took = time.monotonic() - start
                outcome = f"done in {took:.1f} s" if ok else "failed"
                if self._live:  # over the count drawn last, if any
                    pad = " " * max(shown - len(outcome), 0)
                    out.write(f"\r{verb} {path} ... {outcome}{pad}\n" if shown else f" {outcome}\n")
                else:
                    out.write(f"{verb} {path} ... {outcome}\n")
                out.flush()
