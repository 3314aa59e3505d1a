"""Process isolation's lane: one grade in a warm worker (`gradekit.process.workers`), killed
at its timeout; and what the worker does with a grade (`grade_payload`, its work function).

The grader travels to the worker pickled (once per worker); a grader that cannot be pickled
is created again there from its kind, name and options. The suite's folder and the parent's
`sys.path` are put on the worker's `sys.path` first, so a `graders.py` beside the suite file
imports there too. The worker is forked from the fork server, or, with the sandbox
(`sandbox: auto` where bubblewrap runs, or `bwrap`), is a Python in bubblewrap whose PID
namespace catches even processes that left the group.

A worker that crashes (a segfault, `os._exit`), runs out of memory (`memory_limit_mb`, an
address-space limit), or outlives its timeout gives an error result for that grade only.

Imports: the core, the registry (to create a grader again), `gradekit.process.workers` and
the runner's results and settings.
"""

from __future__ import annotations

import pickle
import signal
import sys
from typing import Any

from gradekit.core.types import GradeResult, Sample, error_text
from gradekit.process.workers import (
    WorkerDied,
    WorkerSpec,
    WorkerStartError,
    WorkerTimeout,
    ask,
    visible_folders,
    working_folder,
)
from gradekit.registry.entries import GraderEntry
from gradekit.registry.registry import agrade_of
from gradekit.run.exits import GRADER_RAISES
from gradekit.run.settings import Settings
from gradekit.run.verdict import call_sync, finish, timeout_result

__all__ = ["grade_in_worker", "grade_payload"]

Payload = tuple[str, Any]
"""("pickle", the pickled grader) or ("create", (kind, name, options, why not pickled))."""


def grade_in_worker(
    entry: GraderEntry, sample: Sample, seconds: float, settings: Settings, jailed: bool
) -> GradeResult:
    """Grade `sample` with `entry` in a warm worker (in bubblewrap when `jailed`); kill the
    worker after `seconds`. Blocks the calling (pool) thread until it answers, dies or is
    killed."""
    paths = _paths(settings)
    spec = WorkerSpec(grade_payload, settings.memory_limit_mb, tuple(paths))
    if jailed:
        visible = tuple(visible_folders(paths, sample.workspace))
        spec = WorkerSpec(
            grade_payload, settings.memory_limit_mb, tuple(paths), visible, working_folder(paths)
        )
    try:
        result: GradeResult = ask(
            spec, entry.grader, lambda: _payload(entry), sample, seconds=seconds, owner=settings
        )
    except WorkerStartError as error:
        text = f"{error_text(error.cause)} (starting a child process for grader '{entry.name}')"
        return GradeResult.of_error(entry.kind, entry.name, text)
    except WorkerTimeout:
        return timeout_result(entry, seconds)
    except WorkerDied as died:
        text = died.lost if died.lost is not None else _death(entry, died.exit_code)
        return GradeResult.of_error(entry.kind, entry.name, text)
    if result.error is not None and result.error.split(":")[0] == "MemoryError":
        return _memory_error(result, settings.memory_limit_mb)
    return result


def _payload(entry: GraderEntry) -> Payload:
    try:
        return ("pickle", pickle.dumps(entry.grader))
    except Exception as error:
        return ("create", (entry.kind, entry.name, dict(entry.config), error_text(error)))


def _paths(settings: Settings) -> list[str]:
    paths = list(sys.path)
    if settings.suite_dir is not None:
        paths.insert(0, settings.suite_dir)
    return paths


def _death(entry: GraderEntry, exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            cause = signal.Signals(-exitcode).name
        except ValueError:
            cause = f"signal {-exitcode}"
        return (
            f"ChildProcessError: grader '{entry.name}' crashed its process ({cause}); "
            "fix the grader (run it with isolation: thread to see the error)"
        )
    return (
        f"ChildProcessError: grader '{entry.name}' ended its process with exit code "
        f"{exitcode} before returning a result; a grader must return a GradeResult, not exit"
    )


def _memory_error(result: GradeResult, memory_limit_mb: int | None) -> GradeResult:
    if memory_limit_mb is None:
        text = f"MemoryError: grader '{result.name}' ran out of memory; fix the grader"
    else:
        text = (
            f"MemoryError: grader '{result.name}' exceeded the memory limit of "
            f"{memory_limit_mb} MiB; raise the limit or fix the grader"
        )
    return GradeResult.of_error(result.kind, result.name, text)


# -- in the worker ---------------------------------------------------------------------------


def grade_payload(payload: Payload, sample: Sample) -> tuple[GradeResult, bool]:
    """The warm workers' work for process isolation: grade `sample` with the grader of
    `payload`; False (the worker is not to be trusted again) after a MemoryError."""
    try:
        result = _grade(payload, sample)
    except MemoryError:
        return GradeResult.of_error(*_names(payload), "MemoryError"), False
    healthy = result.error is None or result.error.split(":")[0] != "MemoryError"
    return result, healthy


def _names(payload: Payload) -> tuple[str, str]:
    how, data = payload
    if how == "create":
        return data[0], data[1]
    return "?", "?"


def _grade(payload: Payload, sample: Sample) -> GradeResult:
    import asyncio

    from gradekit.core.context import suite_dir

    how, data = payload
    try:
        if how == "pickle":
            grader = pickle.loads(data)
        else:
            kind, name, config, why = data
            from gradekit.registry.registry import create

            try:
                with suite_dir(sys.path[0] if sys.path else None):
                    grader = create(kind, name, config)
            except Exception as error:
                text = (
                    f"PicklingError: grader '{name}' cannot be sent to a child process ({why}) "
                    f"nor created there ({error_text(error)}); make its class importable at "
                    "module level or use isolation: thread"
                )
                return GradeResult.of_error(kind, name, text)
    except MemoryError:
        raise
    except Exception as error:
        text = f"{error_text(error)} (loading the grader in its child process)"
        return GradeResult.of_error("?", "?", text)
    entry = GraderEntry(grader=grader, kind=grader.kind, name=grader.name)
    agrade = agrade_of(grader)
    if agrade is None:
        return call_sync(entry, sample).result
    try:
        value = asyncio.run(_await(agrade, sample))
    except MemoryError:
        raise
    except GRADER_RAISES as error:  # SIGINT is ignored here: a KeyboardInterrupt is the grader's
        return GradeResult.of_error(entry.kind, entry.name, error)
    return finish(entry, value)


async def _await(agrade: Any, sample: Sample) -> Any:
    return await agrade(sample)
