"""The loop-thread side of one run: reading cases, batching, tasks and timeouts.

Cases are read lazily from `suite.cases()`, with a bounded window of cases in flight. A case
whose graders are all `inline` joins a batch graded in one worker thread (no task or thread
per grade); one whose graders all wait on commands is queued for the blocking lane
(`gradekit.run.blocking`); any other case is a task on the loop. At most `jobs` cases of the
last two kinds are graded at once."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from gradekit.core.coroutines import run_loop
from gradekit.registry.abilities import is_bounded_entry
from gradekit.registry.entries import GraderEntry
from gradekit.report.json import FinishedCase
from gradekit.report.model import ResultRecord
from gradekit.report.summary import SummaryBuilder
from gradekit.run.batch import BatchState, GradeKey, grade_batch
from gradekit.run.blocking import BlockingLane
from gradekit.run.dispatch import every_turn, is_inline
from gradekit.run.grade import grade_case, unloadable
from gradekit.run.pool import DaemonPool, Ticket
from gradekit.run.results import timed_out
from gradekit.run.settings import Context, Settings, set_context
from gradekit.suite.model import Case, Suite

__all__ = ["BATCH_SIZE", "COUNTING_BATCH_SIZE", "STALL_SECONDS", "STOP_WAIT_SECONDS"]


BATCH_SIZE: Final = 1024
"""Inline cases graded per batch: large enough that handing a batch from thread to thread
costs nothing per case (each hand-off is a wake-up, and a thread waking while another computes
waits for the GIL up to its switch interval, 5 ms: on a busy machine that was more than the
grading of 256 cases, bench/RESULTS.md), small enough that progress is reported often and the
reports a batch holds until it is handed over stay few (a few MB)."""


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


_Receive = Callable[[Sequence[tuple[int, FinishedCase]], SummaryBuilder | None], None]


_CASES, _DONE, _FAILED = "cases", "done", "failed"


def _bounded(graders: tuple[GraderEntry, ...]) -> bool:
    return all(is_bounded_entry(entry) for entry in graders)


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
        # Cases whose graders all wait on commands: graded wholly in worker threads.
        self.blocking = BlockingLane(
            jobs, self.context, self._emit, lambda case: case.policy or suite.policy
        )
        self.out: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.stopping = False
        self.read = 0  # cases read from the suite (by the loop's thread only)
        self.received = 0  # cases the caller received (by the caller's thread only)
        self.waiting = False  # the loop waits for room
        self.room: asyncio.Event | None = None
        self._cases_running = 0  # cases graded as tasks on the loop now
        self._last_graders: tuple[GraderEntry, ...] | None = None
        self._last_inline = False

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
        # Counted here, read by the loop: the loop is woken only when it waits for room (a
        # wake-up per chunk would cost a GIL hand-off each).
        self.received += count
        loop = self.loop
        if loop is not None and self.waiting:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._make_room)

    # -- the loop's thread -------------------------------------------------------------------

    def _thread(self) -> None:
        try:
            run_loop(self._main())
        except BaseException as error:
            self.out.put((_FAILED, error))
        else:
            self.out.put((_DONE, None))
        finally:
            self.pool.shutdown()
            self.lane.shutdown()
            self.blocking.stop()

    def _emit(
        self,
        items: Sequence[tuple[int, FinishedCase]],
        counted: SummaryBuilder | None = None,
        count: int | None = None,
    ) -> None:
        """Hand finished cases to the caller: their reports (kept or streamed), their summary
        when counted already, and their number (reports may not have been built)."""
        count = len(items) if count is None else count
        if count:
            self.out.put((_CASES, (items, counted, count)))

    def _make_room(self) -> None:
        if self.room is not None and self.in_flight < self.window:
            self.room.set()

    @property
    def in_flight(self) -> int:
        """Cases read and not yet received by the caller."""
        return self.read - self.received

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
                    self.waiting = True
                    try:
                        if self.in_flight >= self.window:  # received meanwhile: no wake-up
                            await self.room.wait()
                    finally:
                        self.waiting = False
                self.read += 1
                if case.error is not None:
                    self._emit([(position, unloadable(case))])
                elif every_turn(case, self._inline):
                    batch.append((position, case))
                    if len(batch) >= self.batch_size:
                        flush()
                elif self.blocking.takes(case):
                    await self._to_lane(position, case, slots, flush, spawn)
                else:
                    if slots.locked():
                        flush()
                    await slots.acquire()
                    spawn(self._one_case(position, case, slots))
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

    async def _to_lane(
        self,
        position: int,
        case: Case,
        slots: asyncio.Semaphore,
        flush: Callable[[], None],
        spawn: Callable[[Any], None],
    ) -> None:
        """Queue a case for the blocking lane and start its runners while more are wanted,
        each on a slot of `slots` (flushing the batch before waiting for one)."""
        lane = self.blocking
        lane.add(position, case)
        while lane.wants_runner():
            if slots.locked():
                flush()
            await slots.acquire()
            watch = lane.start(slots)
            if watch is None:
                return
            spawn(watch)

    def _inline(self, graders: tuple[GraderEntry, ...]) -> bool:
        """Whether every one of a turn's graders is inline (its case joins a batch); the
        answer for the last tuple asked is kept (a dataset's cases share the suite's)."""
        if graders is not self._last_graders:
            settings = self.settings
            self._last_inline = all(is_inline(entry, settings) for entry in graders)
            self._last_graders = graders
        return self._last_inline

    def _all_bounded(self, items: list[tuple[int, Case]]) -> bool:
        """Whether every grade of these cases is bounded (see `_batch`)."""
        return all(every_turn(case, _bounded) for _, case in items)

    async def _one_case(self, position: int, case: Case, slots: asyncio.Semaphore) -> None:
        self._cases_running += 1
        try:
            report = await grade_case(case, case.policy or self.suite.policy, self.context)
            self._emit([(position, report)])
        finally:
            self._cases_running -= 1
            slots.release()

    async def _batch(self, items: list[tuple[int, Case]]) -> None:
        """Grade a batch on the inline lane; a grade that outlives its timeout gets the timeout
        error, its worker is abandoned, and the rest of the batch goes on in a new one.

        A batch whose every grade is `bounded` (the built-in text kinds), while no other case
        is in flight, is graded here instead: such a grade cannot hang, and nothing else needs
        the loop meanwhile, so there is no grade to abandon and no one to answer; its timeout
        is judged when it returns, as the lane judges a grade that held the GIL. That spares
        a batch two thread hand-offs, a measurable part of a run of such kinds
        (bench/RESULTS.md, "Batches of the built-in kinds graded in the loop's own thread")."""
        lone = not self._cases_running and not self.blocking.busy()
        if lone and self._all_bounded(items):
            state = BatchState(keep=self.keep)
            grade_batch(items, state, {}, self.settings, self.suite.policy)
            self._emit(state.done, state.summary, state.finished)
            return
        preset: dict[GradeKey, ResultRecord] = {}
        lane = self.lane
        while items:
            state = BatchState(keep=self.keep)
            ticket = lane.submit(
                grade_batch, items, state, preset, self.settings, self.suite.policy
            )
            future = asyncio.wrap_future(ticket.future)
            try:
                while True:
                    grading = state.grading
                    if grading is None:
                        wait = 0.5
                    else:
                        started, seconds = grading.started, grading.seconds
                        now = time.perf_counter()
                        wait = started + seconds - now
                        if wait <= 0:
                            finished = self._abandon(state, ticket, future)
                            key = grading.key()
                            entry = dict(items)[key.case].turns[key.turn].graders[key.grader]
                            preset[key] = timed_out(entry, seconds)
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
                        self._emit(state.done, state.summary, state.finished)
                        items = []
                        break
            except asyncio.CancelledError:
                # Cases finished before the stop belong in the partial report.
                self._abandon(state, ticket, future, wait=STOP_WAIT_SECONDS)
                raise

    def _abandon(
        self, state: BatchState, ticket: Ticket, future: asyncio.Future[Any], *, wait: float = 0.0
    ) -> int:
        """Give up on a batch's worker; emit the cases it finished and return their count.

        A batch that keeps reports hands over the ones finished. A batch that only counts hands
        over its summary if its worker stops within `wait` seconds (it stops at the end of the
        case in progress); a worker that does not (hung in a grade) has its whole batch graded
        again, and counted once, by the next attempt (inline graders are pure).
        """
        state.abandoned = True
        if state.keep:
            done = list(state.done)
            self._emit(done)
            finished = len(done)
        elif wait and state.stopped.wait(wait):
            finished = state.finished
            self._emit([], state.summary, finished)
        else:
            finished = 0
        self.lane.abandon(ticket)
        future.cancel()
        return finished
