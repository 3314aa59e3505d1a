"""The runner: `run_suite` grades a suite's cases concurrently; `grade` grades one sample.

The event loop runs in a daemon thread of its own (see `gradekit.run.loop`); the thread that
called `run_suite` receives each finished case from a queue, calls `on_case` with it and counts
it. So `on_case` always runs in the caller's thread, Ctrl-C (KeyboardInterrupt, delivered to the
main thread) stops the run cleanly wherever the graders are, and a grader that hangs holds
neither the caller nor the exit of the process."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Final

import attrs

from gradekit._types import Grader, GradeResult, Sample
from gradekit.registry.entries import GraderEntry, Isolation
from gradekit.report.model import CaseReport, ResultRecord, SuiteReport, SummaryBuilder
from gradekit.run.dispatch import entry_of, run_entry, run_sync
from gradekit.run.loop import _Run
from gradekit.run.settings import Context, Settings, current_context, default_jobs, set_context
from gradekit.suite.model import Suite

__all__ = ["grade", "run_suite"]


_STOP_SECONDS: Final = 5.0


def grade(
    sample: Sample, graders: Iterable[Grader | GraderEntry], *, timeout: float | None = None
) -> tuple[GradeResult, ...]:
    """Grade one sample with every grader, concurrently; results in the graders' order.

    `graders` are graders (from `gradekit.create`) or suite entries. `timeout` (seconds,
    default 60) applies to graders whose entry sets none. Never raises for a grader's fault:
    such a grader gets an error result.
    """
    entries = [entry_of(grader) for grader in graders]
    settings = Settings() if timeout is None else Settings(timeout=_seconds(timeout))

    async def main() -> list[ResultRecord]:
        context = Context(settings, current_context().pool)
        set_context(context)
        return await asyncio.gather(*(run_entry(e, sample, context) for e in entries))

    # Each result with the duration the runner measured, on a copy: the grader's is its own.
    return tuple(attrs.evolve(r.result, duration_ms=r.duration_ms) for r in run_sync(main))


def run_suite(
    suite: Suite,
    *,
    jobs: int | None = None,
    on_case: Callable[[CaseReport], object] | None = None,
    timeout: float | None = None,
    isolation: Isolation | None = None,
    keep_cases: bool = True,
    memory_limit_mb: int | None = None,
) -> SuiteReport:
    """Grade every case of `suite` and return the report.

    `jobs`: cases graded at once (default `default_jobs()`: CPU count + 4, at most 32).
    `on_case(report)`: called in this thread as each case finishes (in finishing order).
    `timeout` / `isolation`: for entries that set none (an entry's own value wins; without
    either, the suite's timeout and thread isolation). `memory_limit_mb`: address-space limit
    of each child process under process isolation. `keep_cases=False`: keep only the summary,
    for runs too large to hold every case in memory.

    The report's cases are in the suite's order. Ctrl-C stops the run: the report then holds
    the cases that finished and has `complete=False`.
    """
    jobs = default_jobs() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
    if isolation not in (None, "thread", "process"):
        raise ValueError(f"isolation must be 'thread' or 'process', got {isolation!r}")
    if memory_limit_mb is not None and memory_limit_mb <= 0:
        raise ValueError(f"memory_limit_mb must be > 0, got {memory_limit_mb!r}")
    folder = os.path.dirname(os.path.abspath(suite.path)) if suite.path else None
    settings = Settings(
        timeout=suite.timeout if timeout is None else _seconds(timeout),
        isolation=isolation,
        memory_limit_mb=memory_limit_mb,
        suite_dir=folder,
    )
    started = time.perf_counter()
    receiver = _Receiver(keep_cases, on_case)
    run = _Run(suite, settings, jobs, keep=keep_cases or on_case is not None)
    complete = True
    # Finished reports (and the suite already in memory) are long-lived: frozen, the cyclic
    # garbage collector stops walking them again and again as the run grows (that walk
    # doubled the cost of the fastest graders). Not done when someone else froze objects.
    freeze = receiver.freeze = gc.isenabled() and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    run.start()
    try:
        run.deliver(receiver.receive)
    except KeyboardInterrupt:
        complete = False
        run.stop()
        with contextlib.suppress(KeyboardInterrupt):
            run.deliver(receiver.receive, deadline=time.monotonic() + _STOP_SECONDS)
    except BaseException:
        run.stop()
        raise
    finally:
        if freeze:
            gc.unfreeze()
    stored = receiver.stored
    cases = tuple(stored[position] for position in sorted(stored))
    return SuiteReport(
        suite=suite.name,
        cases=cases,
        complete=complete,
        duration_ms=(time.perf_counter() - started) * 1000.0,
        stored_summary=receiver.summary.build(),
    )


def _seconds(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"timeout must be a number of seconds > 0, got {value!r}")
    return float(value)


class _Receiver:
    """The caller's side of one run: counts and keeps the finished cases, calls `on_case`."""

    def __init__(self, keep_cases: bool, on_case: Callable[[CaseReport], object] | None) -> None:
        self.keep_cases = keep_cases
        self.on_case = on_case
        self.stored: dict[int, CaseReport] = {}
        self.summary = SummaryBuilder()
        self.freeze = False

    def receive(
        self, items: Sequence[tuple[int, CaseReport]], counted: SummaryBuilder | None
    ) -> None:
        """Take a chunk of finished cases; `counted` is their summary when the worker that
        graded them counted them already."""
        summary, on_case = self.summary, self.on_case
        if on_case is None:
            if self.keep_cases:
                self.stored.update(items)
            if counted is not None:
                summary.merge(counted)
            else:
                for _, report in items:
                    summary.add(report)
        else:
            # Each case is counted and kept before `on_case` sees it, as if one at a time: an
            # exception (Ctrl-C) in `on_case` leaves the rest of the chunk unreceived.
            received = 0
            try:
                for position, report in items:
                    if self.keep_cases:
                        self.stored[position] = report
                    received += 1
                    on_case(report)
            finally:
                if counted is not None and received == len(items):
                    summary.merge(counted)
                else:
                    for _, report in items[:received]:
                        summary.add(report)
        if self.freeze:  # see run_suite
            gc.freeze()
