"""What a run decides for entries that do not decide themselves, and the run in progress with
the worker threads it grades in.

The options of `run_suite` beyond the common ones, in three small groups: `GraderDefaults`
(how entries that set none are graded: timeout, isolation, memory limit, sandbox), `Outputs`
(what the report keeps of each case, and a stream that writes the cases as they end) and
`Statistics` (what the summary measures besides its counts: the baseline run compared with,
the k of pass@k, the level of the intervals).

Each checks its values when it is made (ValueError, or ConfigError for a timeout, naming what
to give), so a wrong option fails at the call, before anything is read or graded. Imports the
core modules and the checks of `gradekit.report` (`checked_ks`, `check_confidence`).

**The worker pool** (`DaemonPool`): daemon threads whose hung workers can be abandoned.
`concurrent.futures.ThreadPoolExecutor` joins its workers at interpreter exit, so one grader
stuck in `while True` would keep the process alive forever. Here every worker is a daemon
thread, nothing joins them, and a worker running a task that timed out is abandoned: a fresh
worker takes its place at once, and the old one leaves the pool if its task ever returns."""

from __future__ import annotations

import contextvars
import functools
import itertools
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from gradekit.core.context import RunContext, current_run, set_run, set_run_sandbox
from gradekit.core.values import seconds
from gradekit.registry.entries import GraderEntry, Isolation
from gradekit.registry.registry import sandboxes_itself
from gradekit.report.attempts import DEFAULT_CONFIDENCE, check_confidence, checked_ks

if TYPE_CHECKING:
    from gradekit.history.baseline import Baseline
    from gradekit.report.model import CaseReport
    from gradekit.report.reading import Run
    from gradekit.run.rescue import Rescue
    from gradekit.run.stream import CaseStream

__all__ = [
    "TIMED_OUT",
    "Context",
    "DaemonPool",
    "GraderDefaults",
    "Outputs",
    "Settings",
    "Statistics",
    "Ticket",
    "current_context",
    "default_jobs",
    "set_context",
]


TIMED_OUT: Final = object()
"""What a task that ran past its time gives instead of a result."""

_names = itertools.count()


class Ticket:
    """One submitted task: its future, and when a worker started it (None while queued)."""

    __slots__ = ("abandoned", "args", "detached", "fn", "future", "started")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args
        self.future: Future[Any] = Future()
        self.started: float | None = None
        self.abandoned = False
        self.detached = False

    def remaining(self, seconds: float) -> float:
        """Seconds left before this task has *run* (not queued) for `seconds`: all of them
        while it is queued, 0 or less once it is past them."""
        started = self.started
        return seconds if started is None else started + seconds - time.monotonic()

    def result(self, pool: DaemonPool, seconds: float) -> Any:
        """Wait here for the task's result; once it has run for `seconds`, abandon it to
        `pool` and return TIMED_OUT instead."""
        while True:
            remaining = self.remaining(seconds)
            if remaining <= 0:
                pool.abandon(self)
                return TIMED_OUT
            done, _ = wait((self.future,), timeout=remaining)
            if done:
                return self.future.result()


class DaemonPool:
    """Runs callables on up to `size` daemon threads, started on demand."""

    def __init__(self, size: int, name: str = "gradekit-worker") -> None:
        self._size = max(1, size)
        self._name = name
        self._queue: queue.SimpleQueue[Ticket | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Ticket:
        """Queue `fn(*args)`, to run in a copy of the caller's context variables (the run
        context among them); the ticket's future holds its result or exception."""
        ticket = Ticket(contextvars.copy_context().run, (fn, *args))
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is shut down")
            if self._idle > 0:
                self._idle -= 1  # an idle worker will take it
            elif self._workers < self._size:
                self._start_worker()
        self._queue.put(ticket)
        return ticket

    def abandon(self, ticket: Ticket) -> None:
        """Give up on a task (it timed out or its caller went away).

        A queued task will not run; a running one cannot be stopped, so its worker is
        replaced by a new one and leaves the pool when (if ever) the task returns.
        """
        ticket.abandoned = True
        if ticket.future.cancel():
            return
        with self._lock:
            if (
                ticket.started is not None
                and not ticket.future.done()
                and not ticket.detached  # replaced already
                and not self._closed
            ):
                self._start_worker()

    def detach(self, ticket: Ticket) -> None:
        """Stop waiting for a task that runs long: a new worker takes its place at once (the
        queue goes on), and the old one leaves the pool when the task returns. Its result
        still reaches the ticket's future."""
        with self._lock:
            if (
                ticket.started is not None
                and not ticket.future.done()
                and not ticket.detached
                and not ticket.abandoned
                and not self._closed
            ):
                ticket.detached = True
                self._start_worker()

    def shutdown(self) -> None:
        """Stop idle workers; never waits for busy ones (they are daemons)."""
        with self._lock:
            self._closed = True
            workers = self._workers
        for _ in range(workers):
            self._queue.put(None)

    def _start_worker(self) -> None:
        self._workers += 1
        thread = threading.Thread(
            target=self._work, name=f"{self._name}-{next(_names)}", daemon=True
        )
        thread.start()

    def _work(self) -> None:
        while True:
            ticket = self._queue.get()
            if ticket is None:
                return
            if ticket.future.set_running_or_notify_cancel():
                ticket.started = time.monotonic()
                try:
                    result = ticket.fn(*ticket.args)
                except BaseException as error:
                    ticket.future.set_exception(error)
                else:
                    ticket.future.set_result(result)
            with self._lock:
                if (ticket.abandoned or ticket.detached) and ticket.started is not None:
                    # A replacement was started when this task was abandoned or detached: leave.
                    self._workers -= 1
                    return
                self._idle += 1


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
    auto). `max_text`: the bound of each text of the samples its reports carry, in bytes;
    None: reports carry no sample (see `gradekit.report.samples`).
    """

    timeout: float = 60.0
    isolation: Isolation | None = None
    memory_limit_mb: int | None = None
    suite_dir: str | None = None
    sandbox: str | None = None
    max_text: int | None = 4096

    def timeout_of(self, entry: GraderEntry) -> float:
        """The entry's timeout, else the run's."""
        return self.timeout if entry.timeout is None else entry.timeout

    def isolation_of(self, entry: GraderEntry) -> Isolation:
        """The entry's isolation, else the run's, else `thread`; always `thread` for a grader
        that sandboxes its own commands (`abilities.sandboxes_itself`)."""
        if sandboxes_itself(entry.grader):
            return "thread"
        return entry.isolation or self.isolation or "thread"

    def sandbox_of(self, entry: GraderEntry) -> str:
        """The entry's sandbox, else the run's, else `auto`."""
        return entry.sandbox or self.sandbox or "auto"


@attrs.frozen
class Context:
    """The settings and worker pool of the run in progress, and its run context (what its
    grades share: see `gradekit.core.context.RunContext`), by default the one in effect
    where the Context is made (`run_suite` makes it inside the run's own)."""

    settings: Settings
    pool: DaemonPool
    run: RunContext = attrs.field(factory=current_run, eq=False)


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
    set_run(context.run)
    set_run_sandbox(context.settings.sandbox)


def _timeout(value: float | None) -> float | None:
    return None if value is None else seconds(value)


def _isolation(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in (None, "thread", "process"):
        raise ValueError(f"isolation must be 'thread' or 'process', got {value!r}")


def _memory_limit(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"memory_limit_mb must be > 0, got {value!r}")


def _sandbox(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is None:
        return  # nothing asked: the process modules stay unimported
    from gradekit.process.bubblewrap import check_mode

    wrong = check_mode(value)
    if wrong is not None:
        raise ValueError(f"sandbox: {wrong}")


def _max_text(_: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_text must be a whole number of bytes >= 1, got {value!r}")


@attrs.frozen
class GraderDefaults:
    """How the run grades the entries that do not say: `run_suite(suite,
    defaults=GraderDefaults(timeout=10, isolation="process"))`. An entry's own value wins.

    `timeout`: seconds (default: the suite's `timeout:`, else 60). `isolation`: `"thread"` (the
    default) or `"process"`. `memory_limit_mb`: the address-space limit of each child process
    under process isolation (default: none). `sandbox`: `"auto"`, `"bwrap"` or `"none"`, for
    agent code (default: the suite's `sandbox:`, else auto); `"bwrap"` where bubblewrap cannot
    run makes `run_suite` raise SandboxError before anything is graded.
    """

    timeout: float | None = attrs.field(default=None, converter=_timeout)
    isolation: Literal["thread", "process"] | None = attrs.field(default=None, validator=_isolation)
    memory_limit_mb: int | None = attrs.field(default=None, validator=_memory_limit)
    sandbox: str | None = attrs.field(default=None, validator=_sandbox)


@attrs.frozen
class Outputs:
    """What the report keeps of each case: `run_suite(suite, outputs=Outputs(keep_cases=False))`.

    `keep_cases`: which cases `report.cases` holds: True every one, False none (the summary is
    still exact: for runs too large to hold), or a function of a case report
    (`lambda c: c.outcome != "pass"`). `samples`: each turn's report carries the sample it
    graded (input, output, expected, tool calls, a transcript's messages) and each case's its
    metadata, each text cut at `max_text` bytes with a marker saying how much was cut; False:
    the verdicts alone. `stream`: a `gradekit.run.stream.CaseStream` that writes each case
    into a JSON report as it ends, in suite order, with no results log (what `gradekit run`
    does without `--resume`); not with `resume=`. `rescue`: a `gradekit.run.rescue.Rescue`
    that each finished case is written to as it ends, for a process that may have to end the
    run (what `gradekit run` does for a suite whose graders may hold the GIL).
    """

    keep_cases: bool | Callable[[CaseReport], bool] = True
    samples: bool = True
    max_text: int = attrs.field(default=4096, validator=_max_text)
    stream: CaseStream | None = None
    rescue: Rescue | None = None


@attrs.frozen
class Statistics:
    """What the summary measures besides its counts: `run_suite(suite,
    statistics=Statistics(baseline="last.json", confidence=0.9))`.

    `baseline`: a run to compare with (the path of a JSON report or a results log, a
    `SuiteReport`, case reports, or a `Baseline`; an unreadable one makes `run_suite` raise
    ConfigError before anything is graded): `report.baseline` marks each case new, fixed,
    regressed or unchanged against the baseline's case of the same name, with their paired
    statistics. `k`: the k at which the summary gives pass@k and pass^k of cases with several
    attempts (default: 1, 5 and 10 up to the most attempts a case has, and that number), each
    a whole number >= 1. `confidence`: the level of every interval of the summary and of the
    baseline's statistics, between 0 and 1 exclusive.
    """

    baseline: Run | Baseline | None = None
    k: tuple[int, ...] | None = attrs.field(default=None, converter=checked_ks)
    confidence: float = attrs.field(default=DEFAULT_CONFIDENCE, converter=check_confidence)
