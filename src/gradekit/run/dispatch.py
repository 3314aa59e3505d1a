"""Running one grader entry on one sample: timeouts, isolation, async or on the worker pool;
`grade`, one sample through several graders (`gradekit.grade`);
`agrade`, the same awaited on a running event loop;
and the runner's decisions of how an entry is graded (`is_sync`, `is_inline`, `is_blocking`),
from which the loop decides each case's lane.

Shared by the runner and the composite kinds, so a child of a composite is run exactly like a
top-level grader: same timeout, same isolation, same checks, same threshold rule."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

from gradekit.core.coroutines import abandon, run_sync
from gradekit.core.types import Grader, GradeResult, Sample, error_text
from gradekit.core.values import seconds
from gradekit.registry.entries import GraderEntry
from gradekit.registry.registry import (
    agrade_of,
    blocking_grade_of,
    declares_inline,
    is_bounded_entry,
    is_grader,
)
from gradekit.report.model import ResultRecord
from gradekit.run.exits import Raised, contained, refusing_exits
from gradekit.run.settings import (
    TIMED_OUT,
    Context,
    DaemonPool,
    Settings,
    Ticket,
    current_context,
    set_context,
)
from gradekit.run.verdict import call_sync, error_result, finish, record_of, timed_out

if TYPE_CHECKING:
    from gradekit.suite.model import Case

__all__ = [
    "PROCESS_GRACE",
    "agrade",
    "entry_of",
    "every_turn",
    "grade",
    "is_blocking",
    "is_inline",
    "is_sync",
    "run_entry",
]


T = TypeVar("T")


PROCESS_GRACE: Final = 5.0
"""Seconds a process-isolated grade may overrun its timeout (start-up, kill, reap) before the
parent gives up on the worker that supervises the child."""


def is_inline(entry: GraderEntry, run: Settings | None = None) -> bool:
    """True when a composite may call `entry` directly in the thread that grades the
    composite, under the composite's own timeout.

    That is when its grader declares `inline`, it runs in this process (its isolation under
    `run`, or its own when no run is known, is not `process`), and it has no timeout of its
    own (a child with one is graded on its own, under it).
    """
    if not declares_inline(entry.grader) or entry.timeout is not None:
        return False
    isolation = entry.isolation if run is None else run.isolation_of(entry)
    return isolation != "process"


def is_sync(entry: GraderEntry, run: Settings) -> bool:
    """True when `entry` is graded in the runner's lane of sync grades: its `grade` is called
    directly in the lane's thread, one grade after another, with or without a timeout (the
    loop's watch abandons a grade past it).

    That is an inline grader, or one with neither `agrade` (async graders, the judge, keep the
    event loop) nor `grade_blocking` (commands keep the blocking lane), run in this process
    (its isolation under `run` is not `process`: the warm workers keep those).
    """
    grader = entry.grader
    if not declares_inline(grader) and (
        agrade_of(grader) is not None or blocking_grade_of(grader) is not None
    ):
        return False
    return run.isolation_of(entry) != "process"


def is_blocking(entry: GraderEntry, run: Settings) -> bool:
    """True when `entry` may be graded by calling its grader's `grade_blocking` in one of the
    runner's worker threads: the grader has it and the entry runs in this process (its
    isolation under `run` is not `process`)."""
    return blocking_grade_of(entry.grader) is not None and run.isolation_of(entry) != "process"


def every_turn(case: Case, test: Callable[[tuple[GraderEntry, ...]], bool]) -> bool:
    """Whether `test(turn.graders)` holds for every turn of `case` (a case without turns:
    True); a turn whose graders' tuple is the one before's is not tested again."""
    last: tuple[GraderEntry, ...] | None = None
    for turn in case.turns:
        graders = turn.graders
        if graders is not last:
            if not test(graders):
                return False
            last = graders
    return True


def entry_of(grader: Grader | GraderEntry) -> GraderEntry:
    """An entry for a bare grader (weight 1, no threshold), or the entry itself."""
    if isinstance(grader, GraderEntry):
        return grader
    if not is_grader(grader):
        raise TypeError(
            f"expected a grader or a GraderEntry, got {type(grader).__name__}; create graders "
            "with gradekit.create(kind, name, config)"
        )
    return GraderEntry(grader=grader, kind=grader.kind, name=grader.name)


async def run_entry(entry: GraderEntry, sample: Sample, context: Context) -> ResultRecord:
    """Grade `sample` with `entry`, never raising and never outliving the entry's timeout:
    the record of the checked result and of how long the grade took.

    Process isolation runs it in a child process killed at the timeout; an async grader is
    awaited on this loop and cancelled at the timeout; a sync grader runs on the worker pool
    and is abandoned at the timeout (a thread cannot be killed; the run goes on without it).
    """
    settings = context.settings
    seconds = settings.timeout_of(entry)
    if settings.isolation_of(entry) == "process":
        started = time.perf_counter()
        ticket = context.pool.submit(_grade_in_a_child, entry, sample, seconds, settings)
        value = await _await_ticket(context.pool, ticket, seconds + PROCESS_GRACE)
        if value is TIMED_OUT:
            return timed_out(entry, seconds)
        return record_of(entry, finish(entry, value), started)
    agrade = agrade_of(entry.grader)
    if agrade is not None:
        started = time.perf_counter()
        task = asyncio.ensure_future(contained(agrade(sample)))
        try:
            await asyncio.wait((task,), timeout=seconds)
        except asyncio.CancelledError:
            abandon(task)
            raise
        if not task.done():
            # Not `wait_for`: it waits for the cancelled grader to end, which a grader that
            # catches the cancellation (or cleans up slowly) never does (or does late).
            abandon(task)
            return timed_out(entry, seconds)
        try:
            value = task.result()
        except (Exception, asyncio.CancelledError) as error:  # a grader may cancel itself
            return record_of(entry, error_result(entry, error_text(error)), started)
        if isinstance(value, Raised):
            return record_of(entry, error_result(entry, error_text(value.error)), started)
        return record_of(entry, finish(entry, value), started)
    ticket = context.pool.submit(call_sync, entry, sample)
    value = await _await_ticket(context.pool, ticket, seconds)
    if value is TIMED_OUT:
        return timed_out(entry, seconds)
    record: ResultRecord = value
    return record


async def _await_ticket(pool: DaemonPool, ticket: Ticket, seconds: float) -> Any:
    """The ticket's result, or TIMED_OUT once it has *run* (not queued) for `seconds`."""
    future = asyncio.wrap_future(ticket.future)
    try:
        while True:
            remaining = ticket.remaining(seconds)
            if remaining <= 0:
                pool.abandon(ticket)
                future.cancel()
                return TIMED_OUT
            done, _ = await asyncio.wait((future,), timeout=remaining)
            if done:
                return future.result()
    except asyncio.CancelledError:
        pool.abandon(ticket)
        future.cancel()
        raise


def _grade_in_a_child(
    entry: GraderEntry, sample: Sample, seconds: float, settings: Settings
) -> GradeResult:
    """Process isolation: in a warm worker (`run.isolation`), in bubblewrap when the entry's
    sandbox mode uses it, else forked from the forkserver; blocks this pool thread."""
    from gradekit.core.errors import SandboxError
    from gradekit.process.bubblewrap import uses_bwrap

    try:
        jailed = uses_bwrap(settings.sandbox_of(entry))
    except SandboxError as error:
        return GradeResult.of_error(entry.kind, entry.name, error)
    from gradekit.run.isolation import grade_in_worker

    return grade_in_worker(entry, sample, seconds, settings, jailed)


def grade(
    sample: Sample, graders: Iterable[Grader | GraderEntry], *, timeout: float | None = None
) -> tuple[GradeResult, ...]:
    """Grade one sample with every grader, concurrently; results in the graders' order.

    `graders` are graders (from `gradekit.create`) or suite entries. `timeout` (seconds,
    default 60) applies to graders whose entry sets none. Never raises for a grader's fault:
    such a grader gets an error result.
    """
    entries, settings = _grading(graders, timeout)
    if all(is_sync(entry, settings) for entry in entries):
        if all(is_bounded_entry(entry) for entry in entries):
            # Grades that cannot hang need no thread to abandon nor loop to wait on: graded
            # here, as the runner grades a lone batch of them (`gradekit.run.loop`).
            return _results([_in_place(entry, sample, settings) for entry in entries])
        # Sync graders that may hang: each on a pool thread, abandoned past its timeout, with
        # no event loop for the call (a loop and its thread cost a millisecond a call).
        pool = current_context().pool
        with refusing_exits():
            tickets = [(entry, pool.submit(call_sync, entry, sample)) for entry in entries]
            return _results([_waited(pool, entry, ticket, settings) for entry, ticket in tickets])
    with refusing_exits():  # a grader's os._exit is its error result, not the end of the caller
        records = run_sync(lambda: _graded(sample, entries, settings))
    return _results(records)


def _waited(
    pool: DaemonPool, entry: GraderEntry, ticket: Ticket, settings: Settings
) -> ResultRecord:
    """The record of a sync grade on `pool`, waited for here: its timeout record once it has
    run past its timeout (its thread abandoned)."""
    seconds = settings.timeout_of(entry)
    value = ticket.result(pool, seconds)
    if value is TIMED_OUT:
        return timed_out(entry, seconds)
    record: ResultRecord = value
    return record


def _in_place(entry: GraderEntry, sample: Sample, settings: Settings) -> ResultRecord:
    """The record of a bounded grade made in this thread, timed out when it returned past its
    timeout (as the lane judges a grade that held the GIL past it)."""
    record = call_sync(entry, sample)
    seconds = settings.timeout_of(entry)
    if record.duration_ms > seconds * 1000.0:
        return timed_out(entry, seconds)
    return record


async def agrade(
    sample: Sample, graders: Iterable[Grader | GraderEntry], *, timeout: float | None = None
) -> tuple[GradeResult, ...]:
    """`grade`, awaited on the running event loop, which it never blocks: sync graders run on
    the runner's worker threads (abandoned past their timeout), async ones are awaited on this
    loop (cancelled past it), process-isolated ones in a warm worker. The same arguments and
    results as `grade`."""
    entries, settings = _grading(graders, timeout)
    with refusing_exits():
        # A task of its own: the run context it sets stays out of the caller's.
        records = await asyncio.ensure_future(_graded(sample, entries, settings))
    return _results(records)


def _grading(
    graders: Iterable[Grader | GraderEntry], timeout: float | None
) -> tuple[list[GraderEntry], Settings]:
    """The entries of `grade`'s graders and the settings of its `timeout`."""
    entries = [entry_of(grader) for grader in graders]
    return entries, Settings() if timeout is None else Settings(timeout=seconds(timeout))


async def _graded(
    sample: Sample, entries: list[GraderEntry], settings: Settings
) -> list[ResultRecord]:
    """Every entry's record of `sample`, graded concurrently on this loop."""
    context = Context(settings, current_context().pool)
    set_context(context)
    return await asyncio.gather(*(run_entry(e, sample, context) for e in entries))


def _results(records: list[ResultRecord]) -> tuple[GradeResult, ...]:
    # Each result with the duration the runner measured, on a copy: the grader's is its own.
    return tuple(attrs.evolve(r.result, duration_ms=r.duration_ms) for r in records)
