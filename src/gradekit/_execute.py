"""Running one grader entry on one sample: timeouts, isolation, and checking what came back.

Shared by the runner and the composite kinds, so a child of a composite is run exactly like a
top-level grader: same timeout, same isolation, same checks, same threshold rule.
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final, TypeVar

import attrs

from gradekit._frozen import FrozenDict
from gradekit._interrupts import GRADER_RAISES, Raised, contained, is_ctrl_c
from gradekit._model import GraderEntry, Isolation
from gradekit._pool import DaemonPool, Ticket
from gradekit._types import Grader, GradeResult, Sample, error_text

__all__ = [
    "FRESH_REFS",
    "Context",
    "Settings",
    "call_sync",
    "current_context",
    "default_jobs",
    "entry_of",
    "error_result",
    "finish",
    "getrefcount",
    "is_inline",
    "json_problem",
    "plain_json",
    "run_entry",
    "run_sync",
    "timeout_result",
]

T = TypeVar("T")

PROCESS_GRACE: Final = 5.0
"""Seconds a process-isolated grade may overrun its timeout (start-up, kill, reap) before the
parent gives up on the worker that supervises the child."""


def default_jobs() -> int:
    """How many cases run at once by default: CPU count + 4, at most 32.

    Grading mostly waits (model calls, subprocesses, network), so a few more than the CPUs
    keeps them busy; the cap keeps a many-core machine from opening hundreds of connections.
    """
    return min(32, (os.cpu_count() or 1) + 4)


@attrs.frozen
class Settings:
    """What a run decides for entries that do not decide themselves.

    `timeout`: seconds for an entry without its own `timeout`. `isolation`: `process` or
    `thread` for an entry without its own `isolation` (None: thread). `memory_limit_mb`: the
    address-space limit of a child process. `suite_dir`: put on a child's `sys.path`.
    `sandbox`: `auto`, `bwrap` or `none` for an entry (or a command) without its own (None:
    auto).
    """

    timeout: float = 60.0
    isolation: Isolation | None = None
    memory_limit_mb: int | None = None
    suite_dir: str | None = None
    sandbox: str | None = None

    def timeout_of(self, entry: GraderEntry) -> float:
        """The entry's timeout, else the run's."""
        return self.timeout if entry.timeout is None else entry.timeout

    def isolation_of(self, entry: GraderEntry) -> Isolation:
        """The entry's isolation, else the run's, else `thread`."""
        return entry.isolation or self.isolation or "thread"

    def sandbox_of(self, entry: GraderEntry) -> str:
        """The entry's sandbox, else the run's, else `auto`."""
        return entry.sandbox or self.sandbox or "auto"


@attrs.frozen
class Context:
    """The settings and worker pool of the run in progress."""

    settings: Settings
    pool: DaemonPool


_CONTEXT: ContextVar[Context | None] = ContextVar("gradekit_run", default=None)


@functools.cache
def _shared_pool() -> DaemonPool:
    return DaemonPool(default_jobs(), "gradekit-shared")


def current_context() -> Context:
    """The context of the run in progress, or defaults with a shared pool outside a run."""
    context = _CONTEXT.get()
    return context if context is not None else Context(Settings(), _shared_pool())


def set_context(context: Context) -> None:
    """Make `context` current in this thread's context (the runner's event loop thread)."""
    _CONTEXT.set(context)


def entry_of(grader: Grader | GraderEntry) -> GraderEntry:
    """An entry for a bare grader (weight 1, no threshold), or the entry itself."""
    if isinstance(grader, GraderEntry):
        return grader
    if not isinstance(grader, Grader):
        raise TypeError(
            f"expected a grader or a GraderEntry, got {type(grader).__name__}; create graders "
            "with gradekit.create(kind, name, config)"
        )
    return GraderEntry(grader=grader, kind=grader.kind, name=grader.name)


def is_inline(entry: GraderEntry, settings: Settings) -> bool:
    """True for a grader that may be called directly in a batch (pure, fast, in-thread)."""
    return (
        getattr(entry.grader, "inline", False) is True
        and (entry.isolation or settings.isolation) != "process"
    )


# -- checking what a grader returned --------------------------------------------------------


getrefcount: Callable[[object], int] = getattr(sys, "getrefcount", lambda value: 1 << 30)
"""`sys.getrefcount`, or a huge count where the interpreter has none."""


def _refs_of_a_fresh_argument(value: object) -> int:
    return getrefcount(value) if hasattr(sys, "getrefcount") else -1


FRESH_REFS: Final = _refs_of_a_fresh_argument(object())
"""`getrefcount(value)` of a value held only by one local variable of the calling function.

A result object nobody else holds may get its duration set in place: rebuilding it would
double the cost of the fastest graders (see bench/runner.py)."""


def timeout_result(entry: GraderEntry, seconds: float) -> GradeResult:
    """`TimeoutError: grader 'x' exceeded 5s`."""
    text = f"TimeoutError: grader '{entry.name}' exceeded {seconds:g}s"
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text, seconds * 1000.0)


def error_result(entry: GraderEntry, text: str, started: float) -> GradeResult:
    """The error result `text` of `entry` for a grade started at `started` (perf_counter)."""
    duration = (time.perf_counter() - started) * 1000.0
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text, duration)


def finish(entry: GraderEntry, value: Any, started: float) -> GradeResult:
    """Check what a grader returned and apply the entry to it.

    Not a GradeResult, a non-bool `passed`, or details that are not strict JSON give an error
    result. The entry's threshold decides `passed`; kind and name are the entry's;
    `duration_ms` is set.
    """
    if not isinstance(value, GradeResult):
        return error_result(
            entry,
            f"TypeError: grader '{entry.name}' returned {type(value).__name__}, not "
            "GradeResult; return gradekit.GradeResult(kind, name, passed, score, ...)",
            started,
        )
    passed = value.passed
    if passed is not True and passed is not False:
        return error_result(
            entry,
            f"TypeError: grader '{entry.name}' returned passed={passed!r} "
            f"({type(passed).__name__}); set passed to True or False",
            started,
        )
    if value.details is not None and not plain_json(value.details):
        problem = json_problem(value.details)
        if problem is not None:
            cls, where = problem
            return error_result(
                entry,
                f"{cls}: grader '{entry.name}' returned details that are not JSON ({where}); "
                "details may hold only dict, list, str, int, float, bool and None",
                started,
            )
    if entry.threshold is not None and value.error is None:
        passed = value.score >= entry.threshold
    duration = (time.perf_counter() - started) * 1000.0
    if (
        passed is value.passed
        and value.name == entry.name
        and value.kind == entry.kind
        and getrefcount(value) <= FRESH_REFS
    ):
        object.__setattr__(value, "duration_ms", duration)
        return value
    return GradeResult(
        entry.kind,
        entry.name,
        passed,
        value.score,
        value.message,
        value.details,
        value.error,
        duration,
    )


_SCALARS: Final = frozenset({str, bool, int, type(None)})


def plain_json(value: Any, depth: int = 0) -> bool:
    """A quick yes for the common shapes of details (small, acyclic, plain types): True only
    for strict JSON; False means "not sure", for `json_problem` to decide."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth > 20:  # deep (or cyclic): leave it to the thorough check
        return False
    # Plain loops: faster here than any C-level pass over a few items (no temporary objects).
    if kind is dict or kind is FrozenDict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            if type(item) not in _SCALARS and not plain_json(item, depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _SCALARS and not plain_json(item, depth + 1):
                return False
        return True
    return False


def json_problem(value: Any) -> tuple[str, str] | None:
    """None for strict JSON; else (error class, `$.path is what`) for the first problem."""
    if plain_json(value):
        return None
    found = _json_problem(value, set())
    if found is None:
        return None
    cls, parts, what = found
    return cls, "$" + "".join(reversed(parts)) + " " + what


def _json_problem(value: Any, active: set[int]) -> tuple[str, list[str], str] | None:
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else ("ValueError", [], f"is {value!r}")
    if isinstance(value, (dict, list, tuple)):
        if id(value) in active:
            return ("ValueError", [], "contains itself")
        active.add(id(value))
        try:
            if isinstance(value, dict):
                for key, item in value.items():
                    if type(key) is not str:
                        return ("TypeError", [], f"has a non-string key {key!r}")
                    found = _json_problem(item, active)
                    if found is not None:
                        found[1].append(f".{key}")
                        return found
            else:
                for index, item in enumerate(value):
                    found = _json_problem(item, active)
                    if found is not None:
                        found[1].append(f"[{index}]")
                        return found
        finally:
            active.discard(id(value))
        return None
    if isinstance(value, (int, str)):
        return None
    return ("TypeError", [], f"is a {kind.__name__}")


# -- running ---------------------------------------------------------------------------------


def call_sync(entry: GraderEntry, sample: Sample) -> GradeResult:
    """Call a sync grader here and now; an exception becomes an error result."""
    started = time.perf_counter()
    try:
        return finish(entry, entry.grader.grade(sample), started)
    except GRADER_RAISES as error:
        if is_ctrl_c(error):
            raise
        return error_result(entry, error_text(error), started)


async def run_entry(entry: GraderEntry, sample: Sample, context: Context) -> GradeResult:
    """Grade `sample` with `entry`, never raising and never outliving the entry's timeout.

    Process isolation runs it in a child process killed at the timeout; an async grader is
    awaited on this loop and cancelled at the timeout; a sync grader runs on the worker pool
    and is abandoned at the timeout (a thread cannot be killed; the run goes on without it).
    """
    settings = context.settings
    seconds = settings.timeout_of(entry)
    if settings.isolation_of(entry) == "process":
        from gradekit import _isolation

        started = time.perf_counter()
        ticket = context.pool.submit(_isolation.grade_in_child, entry, sample, seconds, settings)
        value = await _watch(context.pool, ticket, seconds + PROCESS_GRACE)
        if value is _TIMED_OUT:
            return timeout_result(entry, seconds)
        return finish(entry, value, started)
    agrade: Callable[[Sample], Awaitable[Any]] | None = getattr(entry.grader, "agrade", None)
    if agrade is not None:
        started = time.perf_counter()
        try:
            value = await asyncio.wait_for(contained(agrade(sample)), seconds)
        except asyncio.TimeoutError:
            return timeout_result(entry, seconds)
        except Exception as error:
            return error_result(entry, error_text(error), started)
        if isinstance(value, Raised):
            return error_result(entry, error_text(value.error), started)
        return finish(entry, value, started)
    ticket = context.pool.submit(call_sync, entry, sample)
    value = await _watch(context.pool, ticket, seconds)
    if value is _TIMED_OUT:
        return timeout_result(entry, seconds)
    result: GradeResult = value
    return result


_TIMED_OUT: Final = object()


async def _watch(pool: DaemonPool, ticket: Ticket, seconds: float) -> Any:
    """The ticket's result, or _TIMED_OUT once it has *run* (not queued) for `seconds`."""
    future = asyncio.wrap_future(ticket.future)
    try:
        while True:
            started = ticket.started
            remaining = seconds if started is None else started + seconds - time.monotonic()
            if remaining <= 0:
                pool.abandon(ticket)
                future.cancel()
                return _TIMED_OUT
            done, _ = await asyncio.wait((future,), timeout=remaining)
            if done:
                return future.result()
    except asyncio.CancelledError:
        pool.abandon(ticket)
        future.cancel()
        raise


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even where an event loop is already
    running in this thread (a notebook): then on a fresh loop in a helper thread. From the
    main thread too, so that a KeyboardInterrupt a grader raises is never taken for Ctrl-C."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if threading.current_thread() is not threading.main_thread():
            return asyncio.run(_call(make))
    box: list[Any] = []

    def target() -> None:
        try:
            box.append((True, asyncio.run(_call(make))))
        except BaseException as error:
            box.append((False, error))

    thread = threading.Thread(target=target, name="gradekit-sync", daemon=True)
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    result: T = value
    return result


async def _call(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
