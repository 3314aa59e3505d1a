"""Process isolation: one grade in a child process, killed at its timeout.

The runner grades in warm workers (`gradekit.run.workers`, whose main `worker_child` uses the
grading, payload and memory-limit helpers here); `grade_in_child`, a fresh child per grade, is
the former path, kept for `bench/isolation.py` to compare against.

The child is forked from a clean server process (multiprocessing's `forkserver`; `spawn` where
that does not exist), never from the runner itself, whose threads may hold locks. The grader
travels to the child pickled; a grader that cannot be pickled is created again there from its
kind, name and options. The suite's folder and the parent's `sys.path` are put on the child's
`sys.path` first, so a `graders.py` beside the suite file imports there too.

A child that crashes (a segfault, `os._exit`), runs out of memory (`memory_limit_mb`, an
address-space limit set with `resource.setrlimit`), or outlives its timeout gives an error
result for that grade only.

The child leads a session of its own, and its whole process group is killed when the grade
ends, killed or not: the processes a grader started do not outlive it. With the sandbox
(`sandbox: auto` where bubblewrap runs, or `bwrap`) the child runs in bubblewrap instead
(`gradekit.run.jailed`), whose PID namespace catches even processes that left the group.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from typing import Any, Final

from gradekit._interrupts import GRADER_RAISES
from gradekit._types import GradeResult, Sample, error_text
from gradekit.process import commands as _children
from gradekit.registry.abilities import agrade_of
from gradekit.registry.entries import GraderEntry
from gradekit.run.results import call_sync, finish, timeout_result
from gradekit.run.settings import Settings

__all__ = ["grade_in_child", "stop_children"]

_REAP_SECONDS: Final = 5.0


@functools.cache
def _mp_context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # `_forkserver` makes the server's children ignore Ctrl-C from their first instruction
        # (before `_child_main` runs), so a terminal's Ctrl-C prints no traceback from them.
        context.set_forkserver_preload(
            ["gradekit.run.isolation", "gradekit.run.worker_child", "gradekit.run._forkserver"]
        )
        return context
    return multiprocessing.get_context("spawn")


_lock = threading.Lock()
_running: dict[int, tuple[Settings, Any]] = {}  # pid -> (the settings of its run, the process)


def stop_children(settings: Settings) -> None:
    """Kill the children grading for the run of `settings` now (the run is stopping)."""
    with _lock:
        mine = [process for owner, process in _running.values() if owner is settings]
    for process in mine:
        process.kill()


def _payload(entry: GraderEntry) -> tuple[str, Any]:
    try:
        return ("pickle", pickle.dumps(entry.grader))
    except Exception as error:
        return ("create", (entry.kind, entry.name, dict(entry.config), error_text(error)))


def grade_in_child(
    entry: GraderEntry, sample: Sample, seconds: float, settings: Settings
) -> GradeResult:
    """Grade `sample` with `entry` in a child process; kill it after `seconds`.

    Blocks the calling (worker) thread until the child answers, dies or is killed. (Under
    bubblewrap the child is started by `gradekit.run.jailed` instead: see dispatch.)
    """
    context = _mp_context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_child_main,
        args=(sender, _payload(entry), sample, settings.memory_limit_mb, _paths(settings)),
        name=f"gradekit-{entry.name}",
        daemon=True,
    )
    try:
        process.start()
    except Exception as error:
        receiver.close()
        sender.close()
        text = f"{error_text(error)} (starting a child process for grader '{entry.name}')"
        return GradeResult.of_error(entry.kind, entry.name, text)
    sender.close()
    pid = process.pid
    with _lock:
        _running[pid] = (settings, process)
    _children.child_started(pid, group=False)
    try:
        if not receiver.poll(seconds):
            return timeout_result(entry, seconds)
        try:
            value: GradeResult = receiver.recv()
        except (EOFError, OSError):
            process.join(_REAP_SECONDS)
            return GradeResult.of_error(entry.kind, entry.name, _death(entry, process.exitcode))
        return value
    finally:
        receiver.close()
        _kill_group(process.pid)
        if process.is_alive():
            process.kill()
        process.join(_REAP_SECONDS)
        with _lock:
            _running.pop(pid, None)
        _children.child_ended(pid)
        # Not `process.close()`: at interpreter exit multiprocessing joins every child it
        # still lists, and one closed meanwhile by this thread made that join raise (a
        # traceback after Ctrl-C). The process object is released when dropped.


def _kill_group(pid: int | None) -> None:
    """Kill the session the child leads (see `_child_main`): what it started dies with it.

    Its group id stays taken while any member lives, so no other group can have it."""
    if pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


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


# -- in the child ----------------------------------------------------------------------------


def _child_main(
    sender: Any,
    payload: tuple[str, Any],
    sample: Sample,
    memory_limit_mb: int | None,
    paths: list[str],
) -> None:
    # A session of our own: the parent kills its group, with whatever the grader started.
    # (In bubblewrap the child leads one already.)
    with contextlib.suppress(OSError):
        os.setsid()
    _detach_stdin()
    # The parent decides when to stop (and kills us); a terminal's Ctrl-C must not print a
    # traceback from every child.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if memory_limit_mb is not None:
        _limit_memory(memory_limit_mb)
    sys.path[:] = [*paths, *(p for p in sys.path if p not in paths)]
    try:
        result = _grade(payload, sample)
    except MemoryError:
        result = GradeResult.of_error(*_names(payload), "MemoryError")
    if result.error is not None and result.error.split(":")[0] == "MemoryError":
        result = _memory_error(result, memory_limit_mb)
    try:
        sender.send(result)
    except Exception as error:
        kind, name = _names(payload)
        sender.send(GradeResult.of_error(kind, name, f"{error_text(error)} (sending the result)"))
    finally:
        sender.close()


def _detach_stdin() -> None:
    """/dev/null as the child's stdin, for Python and for the processes it starts."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's stdin, for its life


def _limit_memory(megabytes: int) -> None:
    import resource

    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _names(payload: tuple[str, Any]) -> tuple[str, str]:
    how, data = payload
    if how == "create":
        return data[0], data[1]
    return "?", "?"


def _grade(payload: tuple[str, Any], sample: Sample) -> GradeResult:
    import asyncio

    from gradekit._load_context import suite_dir

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


def _memory_error(result: GradeResult, memory_limit_mb: int | None) -> GradeResult:
    if memory_limit_mb is None:
        text = f"MemoryError: grader '{result.name}' ran out of memory; fix the grader"
    else:
        text = (
            f"MemoryError: grader '{result.name}' exceeded the memory limit of "
            f"{memory_limit_mb} MiB; raise the limit or fix the grader"
        )
    return GradeResult.of_error(result.kind, result.name, text)
