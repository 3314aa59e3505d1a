"""What a run decides for entries that do not decide themselves, and the run in progress."""

from __future__ import annotations

import functools
import os
from contextvars import ContextVar

import attrs

from gradekit.core.context import RunContext, current_run, set_run
from gradekit.registry.abilities import sandboxes_itself
from gradekit.registry.entries import GraderEntry, Isolation
from gradekit.run.pool import DaemonPool

__all__ = ["Context", "Settings", "current_context", "default_jobs", "set_context"]


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
    from gradekit.process.bubblewrap import set_run_default

    _CONTEXT.set(context)
    set_run(context.run)
    set_run_default(context.settings.sandbox)
