"""The blocking lane: cases whose graders all wait on commands, graded wholly in worker threads.

A case whose every turn has one entry, a `BlockingGrader` (the `program`, `build` and `lint`
kinds) not process-isolated, needs the event loop for nothing: its grades block a thread on a
command anyway. Handing each grade from the loop to a thread and back cost two thread wake-ups
a grade on the path from one command to the next. Here the loop only queues such cases; up to
`jobs` runners (each holding one of the run's `jobs` slots) take them one after another, grade
each turn by calling `grade_blocking` directly, and hand each finished case straight to the
caller's queue. A runner that finds nothing queued ends and gives its slot back.

Timeouts: each grade gets a `Deadline` as its `cancel`, which reads as set from the grade's
timeout on, so the command's process group is killed then (within the runner's poll, 0.1 s)
and the grade records the timeout error. A grade that does not return (stuck outside its
command) is abandoned by the loop's watch `ABANDON_GRACE` seconds later: the case goes on in a
new runner from the turn after, with the timeout record; the old thread is left as any
abandoned worker is. A stopped run sets every grade's `cancel` and waits (`STOP_WAIT` at most)
for the runners to end: the commands die before the run returns.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final, NamedTuple

from gradekit.core.types import CANCEL_GRACE, Sample, error_text
from gradekit.registry.abilities import blocking_grade_of
from gradekit.registry.entries import GraderEntry
from gradekit.report.json import FinishedCase
from gradekit.report.model import CaseReport, ResultRecord, TurnReport
from gradekit.run.dispatch import every_turn, is_blocking
from gradekit.run.grade import case_of, skipped_turn, turn_of
from gradekit.run.interrupts import GRADER_RAISES, is_ctrl_c
from gradekit.run.pool import DaemonPool, Ticket
from gradekit.run.results import error_result, finish, record_of, timed_out
from gradekit.run.settings import Context, set_context
from gradekit.run.verdict import Decision
from gradekit.suite.model import Case, Policy

__all__ = ["ABANDON_GRACE", "STOP_WAIT", "BlockingLane", "Deadline"]

ABANDON_GRACE: Final = CANCEL_GRACE
"""Seconds a blocking grade may run past its timeout (its command is killed at the timeout)
before the watch abandons its thread: the protocol's `CANCEL_GRACE`."""

STOP_WAIT: Final = 2.0
"""Seconds a stopped run waits for each runner to end its grade, cut short by then (its
command's process group killed)."""

_WATCH: Final = 0.5  # seconds between the watch's looks at a runner whose grade is not due


class Deadline(threading.Event):
    """A grade's `cancel`: set by hand (a stopped run, an abandoned grade), and set by itself
    from `at` (a `time.monotonic` value) on."""

    def __init__(self, at: float) -> None:
        super().__init__()
        self.at = at

    def is_set(self) -> bool:
        """Whether the grade must stop now."""
        return super().is_set() or time.monotonic() >= self.at


class _Grading(NamedTuple):
    """The grade a runner is in: its cancel (and deadline), entry, timeout and turn."""

    cancel: Deadline
    entry: GraderEntry
    seconds: float
    turn: int


class _Progress:
    """A queued case and how far it got: the reports and decisions of its turns graded so
    far, when it started, and the record decided for its next turn (a timeout)."""

    __slots__ = ("case", "position", "preset", "ran", "started", "turns")

    def __init__(self, position: int, case: Case) -> None:
        self.position = position
        self.case = case
        self.turns: list[TurnReport] = []
        self.ran: list[Decision] = []
        self.started: float | None = None
        self.preset: ResultRecord | None = None


class _Runner:
    """One runner: the case it grades and the grade it is in (both None between cases)."""

    __slots__ = ("abandoned", "grading", "progress")

    def __init__(self) -> None:
        self.abandoned = False
        self.grading: _Grading | None = None
        self.progress: _Progress | None = None


_Emit = Callable[[Sequence[tuple[int, FinishedCase]]], None]


class BlockingLane:
    """The blocking cases of one run: their queue, their runners and the loop's watch."""

    def __init__(
        self,
        jobs: int,
        context: Context,
        emit: _Emit,
        policy_of: Callable[[Case], Policy],
    ) -> None:
        self.jobs = jobs
        self.context = context
        self.emit = emit
        self.policy_of = policy_of
        self.pool = DaemonPool(jobs, "gradekit-blocking")
        self.lock = threading.Lock()
        self.pending: deque[_Progress] = deque()
        self.runners: set[_Runner] = set()
        self.active = 0  # runners holding a slot
        self.stopping = False

    # -- the loop's thread -------------------------------------------------------------------

    def takes(self, case: Case) -> bool:
        """Whether `case` is graded here: every turn has one entry, and it is blocking."""
        return every_turn(case, self._blocking)

    def _blocking(self, graders: tuple[GraderEntry, ...]) -> bool:
        return len(graders) == 1 and is_blocking(graders[0], self.context.settings)

    def add(self, position: int, case: Case) -> None:
        """Queue a case."""
        with self.lock:
            self.pending.append(_Progress(position, case))

    def busy(self) -> bool:
        """Whether a case is queued here or a runner runs."""
        with self.lock:
            return bool(self.pending) or self.active > 0

    def wants_runner(self) -> bool:
        """Whether a case waits and fewer than `jobs` runners run."""
        with self.lock:
            return self._wanted()

    def _wanted(self) -> bool:
        """A case waits and fewer than `jobs` runners run (with the lock held)."""
        return bool(self.pending) and self.active < self.jobs

    def start(self, slots: asyncio.Semaphore) -> Coroutine[Any, Any, None] | None:
        """The watch of a new runner on a slot just acquired from `slots` (given back when it
        ends), or None, the slot given back, when no runner is wanted any more."""
        with self.lock:
            wanted = self._wanted() and not self.stopping
            if wanted:
                self.active += 1
        if not wanted:
            slots.release()
            return None
        return self._watch(slots)

    def stop(self) -> None:
        """Queue nothing more and cut every grade in progress short (a watch does it when
        the run stops; the loop's thread at its end)."""
        with self.lock:
            self.stopping = True
            self.pending.clear()
            gradings = [runner.grading for runner in self.runners]
        for grading in gradings:
            if grading is not None:
                grading.cancel.set()
        self.pool.shutdown()

    async def _watch(self, slots: asyncio.Semaphore) -> None:
        """Run a runner to its end, abandoning (and replacing) it when a grade overstays."""
        try:
            runner, ticket = self._submit()
            future = asyncio.wrap_future(ticket.future)
            while True:
                grading, wait = runner.grading, _WATCH
                if grading is not None:
                    wait = min(wait, grading.cancel.at + ABANDON_GRACE - time.monotonic())
                    if wait <= 0:
                        if self._abandon(runner, grading, ticket):
                            runner, ticket = self._submit()
                            future = asyncio.wrap_future(ticket.future)
                            continue
                        wait = 0.05  # the grade ended meanwhile, or the run stops
                done, _ = await asyncio.wait((future,), timeout=wait)
                if done:
                    future.result()  # raises what the runner raised
                    return
        except asyncio.CancelledError:
            # The run stops: cut every grade short, and wait for this one's kill to land, or
            # an exiting gradekit (runners are daemon threads) would leave it undone.
            self.stop()
            await asyncio.wait((future,), timeout=STOP_WAIT)
            raise
        finally:
            slots.release()

    def _submit(self) -> tuple[_Runner, Ticket]:
        runner = _Runner()
        with self.lock:
            self.runners.add(runner)
        return runner, self.pool.submit(self._run, runner)

    def _abandon(self, runner: _Runner, grading: _Grading, ticket: Ticket) -> bool:
        """Give up on `runner`, stuck in `grading`: its case goes back to the front of the
        queue with the timeout record for that turn. False when the grade ended meanwhile."""
        with self.lock:
            progress = runner.progress
            if runner.grading is not grading or progress is None or self.stopping:
                return False
            runner.abandoned = True
            self.runners.discard(runner)
            progress.preset = timed_out(grading.entry, grading.seconds)
            self.pending.appendleft(progress)
        grading.cancel.set()
        self.pool.abandon(ticket)
        return True

    # -- a runner's thread -------------------------------------------------------------------

    def _run(self, runner: _Runner) -> None:
        set_context(self.context)
        max_text = self.context.settings.max_text
        try:
            while True:
                with self.lock:
                    if runner.abandoned:
                        return
                    if self.stopping or not self.pending:
                        self.active -= 1
                        self.runners.discard(runner)
                        return
                    progress = self.pending.popleft()
                    runner.progress = progress
                report = self._grade_case(runner, progress, max_text)
                if report is not None:
                    self.emit([(progress.position, report)])
        except BaseException:
            with self.lock:
                if not runner.abandoned:
                    self.active -= 1
                    self.runners.discard(runner)
            raise

    def _grade_case(
        self, runner: _Runner, progress: _Progress, max_text: int | None
    ) -> CaseReport | None:
        """The case's report; None when the runner was abandoned or the run stopped."""
        case = progress.case
        if progress.started is None:
            progress.started = time.perf_counter()
        policy = self.policy_of(case)
        for index in range(len(progress.turns), len(case.turns)):
            if progress.ran and progress.ran[-1].ended:
                progress.turns.append(skipped_turn(index))
                continue
            turn = case.turns[index]
            record = progress.preset
            progress.preset = None
            if record is None:
                record = self._grade(runner, turn.graders[0], turn.sample, index)
                if record is None:
                    return None
            report, decision = turn_of(index, turn, (record,), policy, max_text)
            progress.turns.append(report)
            progress.ran.append(decision)
        with self.lock:
            runner.progress = None
        return case_of(case, progress.turns, progress.ran, progress.started, max_text)

    def _grade(
        self, runner: _Runner, entry: GraderEntry, sample: Sample, turn: int
    ) -> ResultRecord | None:
        """One grade's record (its timeout error past its timeout); None when the runner was
        abandoned or the run stopped meanwhile."""
        seconds = self.context.settings.timeout_of(entry)
        grade = blocking_grade_of(entry.grader)
        assert grade is not None
        cancel = Deadline(time.monotonic() + seconds)
        grading = _Grading(cancel, entry, seconds, turn)
        with self.lock:
            if runner.abandoned or self.stopping:
                return None
            runner.grading = grading
        started = time.perf_counter()
        value: Any = None
        failure: str | None = None
        try:
            value = grade(sample, cancel)
        except GRADER_RAISES as error:
            if is_ctrl_c(error):
                raise
            failure = error_text(error)
        with self.lock:
            if runner.abandoned or self.stopping:
                return None
            runner.grading = None
        if time.monotonic() >= cancel.at:
            return timed_out(entry, seconds)
        result = error_result(entry, failure) if failure is not None else finish(entry, value)
        return record_of(entry, result, started)
