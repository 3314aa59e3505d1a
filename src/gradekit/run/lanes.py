"""The thread lanes: cases graded wholly in worker threads, with no hand-off to the event loop
per grade. Two of them: the lane of sync grades and the blocking lane.

**The lane of sync grades**: many cases whose graders are all sync (built-in kinds, `code`
callables, any grader without `agrade`), graded one after another in one worker thread,
without a task, a future or a thread hand-off per grade.

A batch applies the rules every path applies, in the same functions: `finish` checks what each
grader returned, and `turn_of` / `case_of` (`gradekit.run.grade`) assemble and decide each turn
and case, as every lane does; `SummaryBuilder` counts them.
It records which grade is running so that the runner can time it out (see
`gradekit.run.loop`), times a grade out itself when it returns past its timeout (a grade that
held the GIL, as a regex backtracking in C does, kept the watch from acting), and counts the
cases it finished into a summary of its own, so that the thread receiving them need not walk
them again.

**The blocking lane**: cases whose graders all wait on commands, graded wholly in worker threads.

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
for the runners to end: the commands die before the run returns."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Final, NamedTuple

from gradekit.core.types import CANCEL_GRACE, GradeResult, Sample, error_text
from gradekit.registry.entries import GraderEntry
from gradekit.registry.registry import blocking_grade_of, has_well_formed_results
from gradekit.report.json import FinishedCase
from gradekit.report.model import CaseReport, ResultRecord, TurnReport
from gradekit.report.summary import SummaryBuilder
from gradekit.run.dispatch import every_turn, is_blocking
from gradekit.run.exits import GRADER_RAISES, is_ctrl_c
from gradekit.run.grade import case_of, skipped_turn, turn_of
from gradekit.run.settings import Context, DaemonPool, Settings, Ticket, set_context
from gradekit.run.verdict import Decision, error_result, finish, is_final, record_of, timed_out
from gradekit.suite.model import Case, Policy

__all__ = [
    "ABANDON_GRACE",
    "HAND_OVER_SECONDS",
    "STOP_WAIT",
    "BatchState",
    "BlockingLane",
    "Deadline",
    "GradeInProgress",
    "GradeKey",
    "grade_batch",
]


HAND_OVER_SECONDS: Final = 0.25
"""A batch running longer than this (slow graders) hands the reports it finished over at this
pace, so that progress, `on_case` and the results log follow it (a batch of fast grades ends
first: it hands its reports over once, counted)."""

HandOver = Callable[[Sequence[tuple[int, FinishedCase]]], None]
Secure = Callable[[Sequence[tuple[int, FinishedCase]]], list[tuple[int, FinishedCase]]]


class GradeKey(NamedTuple):
    """Which grade of a run: the case's position in the suite, the turn's index in its case,
    and the entry's index in its turn."""

    case: int
    turn: int
    grader: int


class GradeInProgress(NamedTuple):
    """The grade a batch worker is running: when it started (on the `time.perf_counter`
    clock), its timeout in seconds, and which grade it is (see `GradeKey`).

    A tuple, never changed: the worker replaces the whole of it for each grade, so the thread
    that watches it always reads the fields of one grade."""

    started: float
    seconds: float
    case: int
    turn: int
    grader: int

    def key(self) -> GradeKey:
        """Which grade this is."""
        return GradeKey(self.case, self.turn, self.grader)


class BatchState:
    """What a batch worker is doing, shared with the runner that watches it.

    `grading` is the grade in progress, kept only when `watched` (a batch on the lane, whose
    runner looks at it; a batch graded in the loop's own thread has no one to). `finished`
    counts the cases finished, in the batch's order, and `summary` counts their results;
    `done` holds their (position, report) pairs when the batch hands its reports over (`keep`;
    a run that keeps no report and streams none only needs pure graders' cases counted). Once
    `abandoned` is set the worker stops at the end of the case in progress (a batch that keeps
    reports leaves that case out, for the runner has copied `done`; one that counts counts it).
    `cut` makes it stop after the case in progress, which it finishes and hands over.
    `stopped` is set when the worker has stopped or finished: from then on `summary` and
    `finished` agree.

    `hand_over`, when given (a batch that keeps reports), receives the reports finished so far
    every `HAND_OVER_SECONDS` while the batch runs longer (slow graders), uncounted; `emitted`
    is how many of `done` went so. `secure`, when given (a supervised run: `Rescue.secure`),
    writes each case out as it ends, before the next grade starts, and gives what `done`
    holds of it. `begin`, when given (a supervised run: `Marks.begin`), is told each grade
    as it begins. `lock` guards `finished`, `end`, `emitted` and `abandoned`."""

    __slots__ = (
        "abandoned",
        "begin",
        "done",
        "emitted",
        "end",
        "finished",
        "grading",
        "hand_over",
        "keep",
        "lock",
        "secure",
        "stopped",
        "summary",
        "watched",
    )

    def __init__(
        self,
        *,
        keep: bool = True,
        watched: bool = True,
        hand_over: HandOver | None = None,
        secure: Secure | None = None,
        begin: Callable[[Case, int, int, float], None] | None = None,
    ) -> None:
        self.grading: GradeInProgress | None = None
        self.watched: Final = watched
        self.begin: Final = begin
        self.keep: Final = keep
        self.hand_over: Final = hand_over if keep else None
        self.secure: Final = secure if keep else None
        self.done: list[tuple[int, FinishedCase]] = []
        self.emitted = 0
        self.finished = 0
        self.end = sys.maxsize  # the worker stops once `finished` reaches it
        self.lock: Final = threading.Lock()
        self.summary: Final = SummaryBuilder()
        self.abandoned = False
        self.stopped: Final = threading.Event()

    def cut(self) -> int:
        """Make the worker stop after the case it grades now (or starts next), and return
        how many cases of its batch it will have graded then: the rest is another batch's."""
        with self.lock:
            self.end = self.finished + 1
            return self.end

    def rest(self, *, abandon: bool = False) -> tuple[list[tuple[int, FinishedCase]], bool]:
        """The reports finished and not handed over yet, taken now, and whether none was
        handed over before (then `summary` counts exactly these). `abandon`: the worker's
        later reports are dropped (its batch is graded again from `len(done)` on)."""
        with self.lock:
            if abandon:
                self.abandoned = True
            first = self.emitted == 0
            rest = self.done[self.emitted :]
            self.emitted = len(self.done)
            return rest, first


class _Step:
    """An entry as the batch loop uses it, read once per distinct tuple of graders."""

    __slots__ = ("advisory", "entry", "final", "grade", "seconds", "weight", "well_formed")

    def __init__(self, entry: GraderEntry, settings: Settings) -> None:
        self.entry: Final = entry
        self.grade: Final[Callable[[Sample], Any]] = entry.grader.grade
        self.seconds: Final = settings.timeout_of(entry)
        self.well_formed: Final = has_well_formed_results(entry)
        self.final: Final = is_final(entry, self.well_formed)
        """What the grader returns is the result as it is (`finish` would not change it)."""
        self.advisory: Final = entry.advisory
        self.weight: Final = entry.weight


def _same(entries: tuple[GraderEntry, ...], others: tuple[GraderEntry, ...]) -> bool:
    """The same entry objects (a dataset's lines reuse them, each in a tuple of its own)."""
    return len(entries) == len(others) and all(
        entry is other
        for entry, other in zip(entries, others)  # noqa: B905 - lengths checked
    )


def grade_batch(  # noqa: PLR0915 - one loop, kept flat: it runs once per grade
    items: Sequence[tuple[int, Case]],
    state: BatchState,
    preset: Mapping[GradeKey, ResultRecord],
    settings: Settings,
    default_policy: Policy,
) -> BatchState:
    """Grade cases whose graders are all sync, in this thread, one grade after another.

    Fills `state` (see `BatchState`) and returns it. `preset` holds grades decided already
    (the timeout of a grade that hung in an earlier attempt at this batch); those grades are
    not run again.
    """
    clock = time.perf_counter
    keep, done, summary = state.keep, state.done, state.summary
    hand_over, lock, secure, begin = state.hand_over, state.lock, state.secure, state.begin
    watched = state.watched
    handed = clock()
    max_text = settings.max_text
    # Most turns share their graders' tuple with the turn before.
    entries: tuple[GraderEntry, ...] = ()
    steps: list[_Step] = []
    counters = summary.counters(())
    try:
        for position, case in items:
            started = now = clock()
            policy = case.policy or default_policy
            turns: list[TurnReport] = []
            ran: list[Decision] = []
            ended = False
            for index, turn in enumerate(case.turns):
                if ended:
                    turns.append(skipped_turn(index))
                    continue
                graders = turn.graders
                if graders is not entries and not _same(graders, entries):
                    entries = graders
                    steps = [_Step(entry, settings) for entry in entries]
                    # Results carry their entry's name: counted under it.
                    counters = summary.counters([entry.name for entry in entries])
                sample = turn.sample
                records: list[ResultRecord] = []
                for number, step in enumerate(steps):
                    known = preset.get(GradeKey(position, index, number)) if preset else None
                    if known is not None:
                        records.append(known)
                        continue
                    if watched:
                        state.grading = GradeInProgress(now, step.seconds, position, index, number)
                    if begin is not None:
                        begin(case, index, number, step.seconds)
                    try:
                        result = step.grade(sample)
                        if not step.final:
                            result = finish(step.entry, result, step.well_formed)
                    except GRADER_RAISES as error:
                        if is_ctrl_c(error):
                            raise
                        result = error_result(step.entry, error_text(error))
                    later = clock()
                    if later - now > step.seconds:
                        # It held the thread (and the GIL: a regex backtracking in C) past
                        # its timeout, so the watch could not act: timed out all the same,
                        # as if the watch had.
                        records.append(timed_out(step.entry, step.seconds))
                    else:
                        duration = (later - now) * 1000.0
                        records.append(ResultRecord(result, step.advisory, step.weight, duration))
                    now = later
                report, decision = turn_of(index, turn, records, policy, max_text)
                results: list[GradeResult] = [record.result for record in records]
                summary.count_results(results, counters)
                if case.attempt is not None:  # its graders' scores are clustered by case
                    summary.attempts.score(case.name, results)
                turns.append(report)
                ran.append(decision)
                ended = decision.ended
            finished = case_of(case, turns, ran, started, max_text)
            passed, errored = finished.passed, finished.errored
            if keep:
                # No report once abandoned: the runner copied `done` (a case left out is graded
                # again by the batch's next attempt).
                if state.abandoned:
                    break
                if secure is None:
                    done.append((position, finished))
                else:  # written out before the next grade, which may never return
                    done.extend(secure(((position, finished),)))
            summary.count_case(passed, errored)
            if case.attempt is not None:
                summary.attempts.count(case.name, passed, errored)
            chunk: list[tuple[int, FinishedCase]] = []
            with lock:
                state.finished += 1
                if hand_over is not None and now - handed >= HAND_OVER_SECONDS:
                    if not state.abandoned:
                        chunk = done[state.emitted :]
                        state.emitted = len(done)
                    handed = now
                stop = state.finished >= state.end or state.abandoned
            if chunk and hand_over is not None:
                hand_over(chunk)
            if stop:
                break
    finally:
        state.stopped.set()
    return state


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
