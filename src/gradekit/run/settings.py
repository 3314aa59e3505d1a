"""What a run decides for entries that do not decide themselves, and the run in progress.

The options of `run_suite` beyond the common ones, in three small groups: `GraderDefaults`
(how entries that set none are graded: timeout, isolation, memory limit, sandbox), `Outputs`
(what the report keeps of each case, and a stream that writes the cases as they end) and
`Statistics` (what the summary measures besides its counts: the baseline run compared with,
the k of pass@k, the level of the intervals).

Each checks its values when it is made (ValueError, or ConfigError for a timeout, naming what
to give), so a wrong option fails at the call, before anything is read or graded. Imports the
core modules and the checks of `gradekit.report` (`checked_ks`, `check_confidence`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal

import attrs

from gradekit.core.context import RunContext, current_run, set_run, set_run_sandbox
from gradekit.core.values import seconds
from gradekit.registry.registry import sandboxes_itself
from gradekit.registry.entries import GraderEntry, Isolation
from gradekit.report.attempts import checked_ks
from gradekit.report.attempts import DEFAULT_CONFIDENCE, check_confidence
from gradekit.run.pool import DaemonPool

if TYPE_CHECKING:
    from gradekit.history.baseline import Baseline
    from gradekit.report.model import CaseReport
    from gradekit.report.reading import Run
    from gradekit.run.rescue import Rescue
    from gradekit.run.stream import CaseStream


__all__ = [
    "Context",
    "GraderDefaults",
    "Outputs",
    "Settings",
    "Statistics",
    "current_context",
    "default_jobs",
    "set_context",
]


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
