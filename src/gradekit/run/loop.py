"""The loop-thread side of one run: reading cases, batching, tasks and timeouts.

Cases are read lazily from `suite.cases()`, with a bounded window of cases in flight. A case
whose graders are all sync (`is_sync`) joins a batch graded in the lane's worker thread (no
task, future or thread hand-off per grade), watched from here for stalls and timeouts; one
whose graders all wait on commands is queued for the blocking lane (`gradekit.run.lanes`);
any other case (an async grader, the judge) is a task on the loop. At most `jobs` cases of the
last two kinds, and of stalled grades in the lane, are graded at once."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from gradekit.core.coroutines import run_loop
from gradekit.registry.entries import GraderEntry
from gradekit.registry.registry import declares_inline, is_bounded_entry
from gradekit.report.json import FinishedCase
from gradekit.report.model import ResultRecord
from gradekit.report.summary import SummaryBuilder
from gradekit.run.dispatch import every_turn, is_sync
from gradekit.run.grade import grade_case, unloadable
from gradekit.run.lanes import BatchState, BlockingLane, GradeKey, grade_batch
from gradekit.run.rescue import Rescue
from gradekit.run.settings import Context, DaemonPool, Settings, Ticket, set_context
from gradekit.run.verdict import timed_out
from gradekit.suite.model import Case, Suite

__all__ = [
    "BATCH_SIZE",
    "CANCEL",
    "COUNTING_BATCH_SIZE",
    "STALL_SECONDS",
    "STOP_WAIT_SECONDS",
]


CANCEL: Final[contextvars.ContextVar[threading.Event | None]] = contextvars.ContextVar(
    "gradekit_cancel", default=None
)
"""An event that, once set, stops the runs started in this context as Ctrl-C does (the
caller's thread gets KeyboardInterrupt within a quarter of a second): how `arun_suite` stops a
run whose task was cancelled."""


BATCH_SIZE: Final = 1024
"""Cases graded per batch of the lane: large enough that handing a batch from thread to thread
costs nothing per case (each hand-off is a wake-up, and a thread waking while another computes
waits for the GIL up to its switch interval, 5 ms: on a busy machine that was more than the
grading of 256 cases, bench/RESULTS.md), small enough that progress is reported often and the
reports a batch holds until it is handed over stay few (a few MB)."""


COUNTING_BATCH_SIZE: Final = 2048
"""Cases graded per batch of the lane when the run only counts them (`keep_cases=False` without
`on_case`): no report is held and nobody watches progress, so batches are larger and the
threads hand work over less often."""


STALL_SECONDS: Final = 0.05
"""A grade in the lane running longer than this (a grader waiting on the network, a hung one)
no longer holds up the rest: its thread is detached and finishes only its case, and the rest
of its batch goes on in a new thread, so that up to `jobs` slow grades run at once. Short
enough that a grader waiting a tenth of a second gains that concurrency; long enough that the
watch wakes up rarely (a few times a second) while grades take microseconds."""


STOP_WAIT_SECONDS: Final = 0.1
"""How long a stopped run waits for a batch that only counts to reach the end of its case (a
few microseconds, unless a grade hangs) so that the cases it finished are counted."""


_Receive = Callable[[Sequence[tuple[int, FinishedCase]], SummaryBuilder | None], None]


_CASES, _DONE, _FAILED = "cases", "done", "failed"


def _bounded(graders: tuple[GraderEntry, ...]) -> bool:
    return all(is_bounded_entry(entry) for entry in graders)


def _pure(graders: tuple[GraderEntry, ...]) -> bool:
    """Whether every grader declares itself pure (`inline`): its grades may be graded again."""
    return all(declares_inline(entry.grader) for entry in graders)


def _every_tuple(
    items: Sequence[tuple[int, Case]], test: Callable[[tuple[GraderEntry, ...]], bool]
) -> bool:
    """Whether `test(graders)` holds for every turn of these cases, each tuple of graders
    tested once (by identity: a dataset's cases share the suite's tuple, so a batch of them
    is one test, not one a case)."""
    tested: set[int] = set()
    for _, case in items:
        for turn in case.turns:
            graders = turn.graders
            if id(graders) not in tested:
                if not test(graders):
                    return False
                tested.add(id(graders))
    return True


class _Run:
    """The loop-thread side of one run."""

    def __init__(
        self,
        suite: Suite,
        settings: Settings,
        jobs: int,
        *,
        keep: bool,
        rescue: Rescue | None = None,
    ) -> None:
        self.suite = suite
        # A supervised run's finished cases, each written out by the thread that finished it
        # before that thread grades anything else (`gradekit.run.rescue`).
        self.rescue = rescue if keep else None
        # Where each grade of the lane is marked as it begins, for the supervisor.
        self.marks = None if rescue is None else rescue.marks
        # Whether anyone will see the case reports: a run that keeps none and streams none
        # only counts its inline cases.
        self.keep = keep
        self.batch_size = BATCH_SIZE if keep else COUNTING_BATCH_SIZE
        self.settings = settings
        self.jobs = jobs
        self.window = jobs + 4 * self.batch_size
        self.pool = DaemonPool(jobs + 1, "gradekit-worker")
        # Sync grades are mostly CPU work, which threads cannot share (the GIL): one thread
        # grades the batches one after another, faster than several taking turns; a grade
        # that stalls (waits) gets a thread of its own (see `STALL_SECONDS`).
        self.lane = DaemonPool(1, "gradekit-lane")
        self.context = Context(settings, self.pool)
        # Cases whose graders all wait on commands: graded wholly in worker threads.
        self.blocking = BlockingLane(
            jobs, self.context, self._emit, lambda case: case.policy or suite.policy
        )
        self.out: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.cancel = CANCEL.get()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.stopping = False
        self.read = 0  # cases read from the suite (by the loop's thread only)
        self.received = 0  # cases the caller received (by the caller's thread only)
        self.waiting = False  # the loop waits for room
        self.room: asyncio.Event | None = None
        self._cases_running = 0  # cases graded as tasks on the loop now
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots: asyncio.Semaphore | None = None  # the `jobs` slots, made on the loop
        self._last_graders: tuple[GraderEntry, ...] | None = None
        self._last_sync = False

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
            if self.cancel is not None and self.cancel.is_set() and not deadline:
                raise KeyboardInterrupt  # stopped as by Ctrl-C
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
        when counted already, and their number (reports may not have been built). Cases
        finished outside the lane's batches (which write theirs as they end) are written
        out first in a supervised run."""
        if self.rescue is not None and items:
            items = self.rescue.secure(items)
        self._put(items, counted, count)

    def _put(
        self,
        items: Sequence[tuple[int, FinishedCase]],
        counted: SummaryBuilder | None = None,
        count: int | None = None,
    ) -> None:
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
        slots = self._slots = asyncio.Semaphore(self.jobs)
        tasks = self._tasks
        spawn = self._spawn
        batch: list[tuple[int, Case]] = []

        def flush() -> None:
            if batch:
                spawn(self._batch(list(batch)))
                batch.clear()

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
                elif every_turn(case, self._sync):
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

    def _spawn(self, coroutine: Any) -> None:
        """Run `coroutine` as a task the run waits for (and cancels when it stops)."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _sync(self, graders: tuple[GraderEntry, ...]) -> bool:
        """Whether every one of a turn's graders is sync (its case joins a batch); the
        answer for the last tuple asked is kept (a dataset's cases share the suite's)."""
        if graders is not self._last_graders:
            settings = self.settings
            self._last_sync = all(is_sync(entry, settings) for entry in graders)
            self._last_graders = graders
        return self._last_sync

    def _all_bounded(self, items: list[tuple[int, Case]]) -> bool:
        """Whether every grade of these cases is bounded (see `_batch`)."""
        return _every_tuple(items, _bounded)

    def _keeps(self, items: list[tuple[int, Case]]) -> bool:
        """Whether a batch of these cases hands its reports over: when the run keeps or
        streams them, and when a grader is not pure (a batch that only counts is graded again
        whole after a timeout, which only pure graders allow)."""
        return self.keep or not _every_tuple(items, _pure)

    async def _one_case(self, position: int, case: Case, slots: asyncio.Semaphore) -> None:
        self._cases_running += 1
        try:
            report = await grade_case(case, case.policy or self.suite.policy, self.context)
            self._emit([(position, report)])
        finally:
            self._cases_running -= 1
            slots.release()

    async def _batch(
        self,
        items: list[tuple[int, Case]],
        preset: dict[GradeKey, ResultRecord] | None = None,
    ) -> None:
        """Grade a batch on the lane and watch it.

        A grade that outlives its timeout gets the timeout error, its worker is abandoned (a
        new one takes its place), and the rest of the batch goes on in the new one. A grade
        still running after `STALL_SECONDS` is a stall: its worker is detached, and once a
        slot of the run's `jobs` is free this batch keeps only the case in progress, holding
        that slot until it ends, and the rest of the batch is a new one. `preset` holds the
        timeout records of grades that hung in an earlier attempt.

        A batch whose every grade is `bounded` (the built-in text kinds), while no other case
        is in flight, is graded here instead: such a grade cannot hang, and nothing else needs
        the loop meanwhile, so there is no grade to abandon and no one to answer; its timeout
        is judged when it returns, as the lane judges a grade that held the GIL. That spares
        a batch two thread hand-offs, a measurable part of a run of such kinds
        (bench/RESULTS.md, "Batches of the built-in kinds graded in the loop's own thread")."""
        keep = self._keeps(items)
        lone = not self._cases_running and not self.blocking.busy()
        if preset is None and lone and self._all_bounded(items):
            state = grade_batch(items, self._state(keep), {}, self.settings, self.suite.policy)
            self._hand_over(state)
            return
        if preset is None:
            preset = {}
        lane, slots = self.lane, self._slots
        held = False  # this batch holds one of the `jobs` slots (it stalled and was cut)
        try:
            while items:
                state = self._state(keep, on_lane=True)
                ticket = lane.submit(
                    grade_batch, items, state, preset, self.settings, self.suite.policy
                )
                future = asyncio.wrap_future(ticket.future)
                try:
                    while True:
                        grading = state.grading
                        wait = STALL_SECONDS  # until the first grade starts
                        if grading is not None:
                            started, seconds = grading.started, grading.seconds
                            now = time.perf_counter()
                            wait = started + seconds - now
                            if wait <= 0:
                                items = self._time_out(state, ticket, future, items, preset)
                                break
                            if not held:
                                stall = started + STALL_SECONDS - now
                                if stall > 0:
                                    wait = min(wait, stall)
                                elif await self._cut(state, ticket, items, preset):
                                    held = True
                                    items = items[: state.end]
                                else:  # no slot free: look again soon
                                    wait = min(wait, STALL_SECONDS)
                        completed, _ = await asyncio.wait((future,), timeout=wait)
                        if completed:
                            future.result()  # raises what the worker raised
                            self._hand_over(state)
                            items = []
                            break
                except asyncio.CancelledError:
                    # Cases finished before the stop belong in the partial report.
                    self._abandon(state, ticket, future, wait=STOP_WAIT_SECONDS)
                    raise
        finally:
            if held and slots is not None:
                slots.release()

    def _state(self, keep: bool, *, on_lane: bool = False) -> BatchState:
        """A batch's state: it writes each case out as it ends in a supervised run (and marks
        each grade as it begins). A batch `on_lane` is watched from the loop (its grade in
        progress kept) and hands its reports over to the caller as it goes (`_put`: written
        out already); one graded in the loop's own thread is neither."""
        secure = None if self.rescue is None else self.rescue.secure
        return BatchState(
            keep=keep,
            watched=on_lane,
            hand_over=self._put if on_lane else None,
            secure=secure,
            begin=None if self.marks is None else self.marks.begin,
        )

    def _time_out(
        self,
        state: BatchState,
        ticket: Ticket,
        future: asyncio.Future[Any],
        items: list[tuple[int, Case]],
        preset: dict[GradeKey, ResultRecord],
    ) -> list[tuple[int, Case]]:
        """The grade in progress is past its timeout: abandon the batch's worker, preset that
        grade's timeout record, and return the cases left to grade (from its case on)."""
        grading = state.grading
        assert grading is not None
        finished = self._abandon(state, ticket, future)
        key = grading.key()
        entry = dict(items)[key.case].turns[key.turn].graders[key.grader]
        preset[key] = timed_out(entry, grading.seconds)
        return items[finished:]

    def _hand_over(self, state: BatchState) -> None:
        """Emit what a finished batch has not handed over yet: counted by its summary when it
        handed nothing over before, else by the receiver (as the reports handed over were)."""
        rest, whole = state.rest()
        if whole:
            self._put(rest, state.summary, state.finished)
        else:
            self._put(rest)

    async def _cut(
        self,
        state: BatchState,
        ticket: Ticket,
        items: list[tuple[int, Case]],
        preset: dict[GradeKey, ResultRecord],
    ) -> bool:
        """A batch's grade stalls: detach its worker, and once one of the run's `jobs` slots is
        free, take it (the caller holds it from then on) and cut the batch after the case in
        progress, the rest watched as a new batch. False when no slot is free yet."""
        if not ticket.detached:
            self.lane.detach(ticket)
        slots = self._slots
        assert slots is not None
        if slots.locked():
            return False
        await slots.acquire()
        kept = state.cut()
        if kept < len(items):
            self._spawn(self._batch(items[kept:], preset))
        return True

    def _abandon(
        self, state: BatchState, ticket: Ticket, future: asyncio.Future[Any], *, wait: float = 0.0
    ) -> int:
        """Give up on a batch's worker; emit the cases it finished and return their count.

        A batch that keeps reports hands over the ones finished. A batch that only counts hands
        over its summary if its worker stops within `wait` seconds (it stops at the end of the
        case in progress); a worker that does not (hung in a grade) has its whole batch graded
        again, and counted once, by the next attempt (inline graders are pure).
        """
        rest, _ = state.rest(abandon=True)
        if state.keep:
            self._put(rest)
            finished = state.emitted
        elif wait and state.stopped.wait(wait):
            finished = state.finished
            self._put([], state.summary, finished)
        else:
            finished = 0
        self.lane.abandon(ticket)
        future.cancel()
        return finished
