"""The runner: `run_suite` grades a suite's cases concurrently; `grade` grades one sample.

The event loop runs in a daemon thread of its own; the thread that called `run_suite` receives
each finished case from a queue, calls `on_case` with it and counts it. So `on_case` always
runs in the caller's thread, Ctrl-C (KeyboardInterrupt, delivered to the main thread) stops
the run cleanly wherever the graders are, and a grader that hangs holds neither the caller nor
the exit of the process.

Cases are read lazily from `suite.cases()`, with a bounded window of cases in flight. A case
whose graders are all `inline` joins a batch graded in one worker thread (no task or thread
per grade); any other case is a task on the loop, at most `jobs` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from gradekit._execute import (
    Context,
    Settings,
    current_context,
    default_jobs,
    entry_of,
    is_inline,
    run_entry,
    run_sync,
    set_context,
    timeout_result,
)
from gradekit._grading import GradeKey, Progress, grade_batch, grade_case, unloadable
from gradekit._model import (
    Case,
    CaseReport,
    GraderEntry,
    Isolation,
    Suite,
    SuiteReport,
    SummaryBuilder,
)
from gradekit._pool import DaemonPool, Ticket
from gradekit._seconds import seconds
from gradekit._types import Grader, GradeResult, Sample

__all__ = ["default_jobs", "grade", "run_suite"]

BATCH_SIZE: Final = 256
"""Inline cases graded per batch: large enough that handing a batch to a thread costs nothing
per case, small enough that progress is reported often and the reports a batch holds until
it is handed over stay few."""

COUNTING_BATCH_SIZE: Final = 2048
"""Inline cases graded per batch when the run only counts them (`keep_cases=False` without
`on_case`): no report is held and nobody watches progress, so batches are larger and the
threads hand work over less often."""

STALL_SECONDS: Final = 0.25
"""A grade of an inline grader running longer than this no longer holds up the other batches
(inline graders are meant to take microseconds): they go on in another thread meanwhile."""

STOP_WAIT_SECONDS: Final = 0.1
"""How long a stopped run waits for a batch that only counts to reach the end of its case (a
few microseconds, unless a grade hangs) so that the cases it finished are counted."""

_STOP_SECONDS: Final = 5.0
_Receive = Callable[[Sequence[tuple[int, CaseReport]], SummaryBuilder | None], None]
_CASES, _DONE, _FAILED = "cases", "done", "failed"


def grade(
    sample: Sample, graders: Iterable[Grader | GraderEntry], *, timeout: float | None = None
) -> tuple[GradeResult, ...]:
    """Grade one sample with every grader, concurrently; results in the graders' order.

    `graders` are graders (from `gradekit.create`) or suite entries. `timeout` (seconds,
    default 60) applies to graders whose entry sets none. Never raises for a grader's fault:
    such a grader gets an error result.
    """
    entries = [entry_of(grader) for grader in graders]
    settings = Settings() if timeout is None else Settings(timeout=seconds(timeout))

    async def main() -> list[GradeResult]:
        context = Context(settings, current_context().pool)
        set_context(context)
        return await asyncio.gather(*(run_entry(e, sample, context) for e in entries))

    return tuple(run_sync(main))


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
        timeout=suite.timeout if timeout is None else seconds(timeout),
        isolation=isolation,
        memory_limit_mb=memory_limit_mb,
        suite_dir=folder,
    )
    started = time.perf_counter()
    collector = _Collector(keep_cases, on_case)
    run = _Run(suite, settings, jobs, keep=keep_cases or on_case is not None)
    complete = True
    # Finished reports (and the suite already in memory) are long-lived: frozen, the cyclic
    # garbage collector stops walking them again and again as the run grows (that walk
    # doubled the cost of the fastest graders). Not done when someone else froze objects.
    freeze = collector.freeze = gc.isenabled() and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    run.start()
    try:
        run.deliver(collector.receive)
    except KeyboardInterrupt:
        complete = False
        run.stop()
        with contextlib.suppress(KeyboardInterrupt):
            run.deliver(collector.receive, deadline=time.monotonic() + _STOP_SECONDS)
    except BaseException:
        run.stop()
        raise
    finally:
        if freeze:
            gc.unfreeze()
    stored = collector.stored
    cases = tuple(stored[position] for position in sorted(stored))
    return SuiteReport(
        suite=suite.name,
        cases=cases,
        complete=complete,
        duration_ms=(time.perf_counter() - started) * 1000.0,
        stored_summary=collector.summary.build(),
    )


class _Collector:
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


class _Run:
    """The loop-thread side of one run."""

    def __init__(self, suite: Suite, settings: Settings, jobs: int, *, keep: bool) -> None:
        self.suite = suite
        # Whether anyone will see the case reports: a run that keeps none and streams none
        # only counts its inline cases.
        self.keep = keep
        self.batch_size = BATCH_SIZE if keep else COUNTING_BATCH_SIZE
        self.settings = settings
        self.jobs = jobs
        self.window = jobs + 4 * self.batch_size
        self.pool = DaemonPool(jobs + 1, "gradekit-worker")
        # Batches of inline graders are pure CPU work, which threads cannot share (the GIL):
        # one thread grades them one after another, faster than several taking turns.
        self.lane = DaemonPool(1, "gradekit-inline")
        self.context = Context(settings, self.pool)
        self.out: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.stopping = False
        self.in_flight = 0
        self.room: asyncio.Event | None = None
        self._last_graders: tuple[GraderEntry, ...] | None = None
        self._last_fast = False

    # -- the caller's thread -----------------------------------------------------------------

    def start(self) -> None:
        thread = threading.Thread(target=self._thread, name="gradekit-loop", daemon=True)
        thread.start()

    def deliver(self, receive: _Receive, deadline: float = 0.0) -> None:
        """Hand finished cases to `receive` until the run ends (or `deadline` passes)."""
        while True:
            wait = 0.25 if not deadline else deadline - time.monotonic()
            if deadline and wait <= 0:
                return
            try:
                what, value = self.out.get(timeout=wait)
            except queue.Empty:
                continue
            if what == _CASES:
                items, counted, count = value
                receive(items, counted)
                self._release(count)
            elif what == _DONE:
                return
            else:
                if self.stopping:  # cancelled on purpose: whatever ended the loop is moot
                    return
                raise value

    def stop(self) -> None:
        """Cancel the run from another thread; the loop emits what finished and ends."""
        self.stopping = True
        loop, task = self.loop, self.task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(task.cancel)

    def _release(self, count: int) -> None:
        loop = self.loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._make_room, count)

    # -- the loop's thread -------------------------------------------------------------------

    def _thread(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:
            self.out.put((_FAILED, error))
        else:
            self.out.put((_DONE, None))
        finally:
            self.pool.shutdown()
            self.lane.shutdown()

    def _emit(
        self,
        items: list[tuple[int, CaseReport]],
        counted: SummaryBuilder | None = None,
        count: int | None = None,
    ) -> None:
        """Hand finished cases to the caller: their reports (kept or streamed), their summary
        when counted already, and their number (reports may not have been built)."""
        count = len(items) if count is None else count
        if count:
            self.out.put((_CASES, (items, counted, count)))

    def _make_room(self, count: int) -> None:
        self.in_flight -= count
        if self.room is not None and self.in_flight < self.window:
            self.room.set()

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        if self.stopping:
            return
        set_context(self.context)
        self.room = asyncio.Event()
        slots = asyncio.Semaphore(self.jobs)
        tasks: set[asyncio.Task[None]] = set()
        batch: list[tuple[int, Case]] = []

        def flush() -> None:
            if batch:
                spawn(self._batch(list(batch)))
                batch.clear()

        def spawn(coroutine: Any) -> None:
            task = asyncio.ensure_future(coroutine)
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        try:
            for position, case in enumerate(self.suite.cases()):
                while self.in_flight >= self.window:
                    flush()
                    self.room.clear()
                    await self.room.wait()
                self.in_flight += 1
                if case.error is not None:
                    self._emit([(position, unloadable(case))])
                elif self._is_fast(case):
                    batch.append((position, case))
                    if len(batch) >= self.batch_size:
                        flush()
                else:
                    if slots.locked():
                        flush()
                    await slots.acquire()
                    spawn(self._slow(position, case, slots))
            flush()
            while tasks:
                done, _ = await asyncio.wait(set(tasks))
                for task in done:
                    task.result()
        finally:
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(set(tasks))

    def _is_fast(self, case: Case) -> bool:
        settings = self.settings
        for turn in case.turns:
            graders = turn.graders
            # Most turns share their graders' tuple with the turn before: remember the last.
            if graders is self._last_graders:
                if not self._last_fast:
                    return False
                continue
            fast = all(is_inline(entry, settings) for entry in graders)
            self._last_graders, self._last_fast = graders, fast
            if not fast:
                return False
        return True

    async def _slow(self, position: int, case: Case, slots: asyncio.Semaphore) -> None:
        try:
            report = await grade_case(case, case.policy or self.suite.policy, self.context)
            self._emit([(position, report)])
        finally:
            slots.release()

    async def _batch(self, items: list[tuple[int, Case]]) -> None:
        """Grade a batch on the inline lane; a grade that outlives its timeout gets the timeout
        error, its worker is abandoned, and the rest of the batch goes on in a new one."""
        preset: dict[GradeKey, GradeResult] = {}
        lane = self.lane
        while items:
            progress = Progress(keep=self.keep)
            ticket = lane.submit(
                grade_batch, items, progress, preset, self.settings, self.suite.policy
            )
            future = asyncio.wrap_future(ticket.future)
            try:
                while True:
                    mark = progress.mark
                    if mark is None:
                        wait = 0.5
                    else:
                        started, seconds, position, index, number = mark
                        now = time.perf_counter()
                        wait = started + seconds - now
                        if wait <= 0:
                            finished = self._abandon(progress, ticket, future)
                            entry = dict(items)[position].turns[index].graders[number]
                            preset[position, index, number] = timeout_result(entry, seconds)
                            items = items[finished:]
                            break
                        if not ticket.detached:
                            stall = started + STALL_SECONDS - now
                            if stall <= 0:
                                lane.detach(ticket)
                            else:
                                wait = min(wait, stall)
                    completed, _ = await asyncio.wait((future,), timeout=wait)
                    if completed:
                        future.result()  # raises what the worker raised
                        self._emit(progress.done, progress.summary, progress.finished)
                        items = []
                        break
            except asyncio.CancelledError:
                # Cases finished before the stop belong in the partial report.
                self._abandon(progress, ticket, future, wait=STOP_WAIT_SECONDS)
                raise

    def _abandon(
        self, progress: Progress, ticket: Ticket, future: asyncio.Future[Any], *, wait: float = 0.0
    ) -> int:
        """Give up on a batch's worker; emit the cases it finished and return their count.

        A batch that keeps reports hands over the ones finished. A batch that only counts hands
        over its summary if its worker stops within `wait` seconds (it stops at the end of the
        case in progress); a worker that does not (hung in a grade) has its whole batch graded
        again, and counted once, by the next attempt (inline graders are pure).
        """
        progress.abandoned = True
        if progress.keep:
            done = list(progress.done)
            self._emit(done)
            finished = len(done)
        elif wait and progress.stopped.wait(wait):
            finished = progress.finished
            self._emit([], progress.summary, finished)
        else:
            finished = 0
        self.lane.abandon(ticket)
        future.cancel()
        return finished
