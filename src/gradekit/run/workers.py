"""Warm workers for process isolation: long-lived children that grade one request after another.

A grade takes an idle worker of the same kind (same sandbox and view of the files, same memory
limit, same `sys.path`), or starts one, sends it the grade and waits up to the timeout. The
worker is forked from the fork server (`sandbox: none`, or `auto` without bubblewrap) or is a
fresh Python in bubblewrap (`gradekit.run.jailed`'s layout); its main is
`gradekit.run.worker_child`, which says what is put back between two grades.

A worker that outlives the timeout is killed with its whole process group (in bubblewrap: its
PID namespace) and the grade gets a timeout error; one that dies (a segfault, `os._exit`, a
MemoryError) gives that grade an error result. Either way it is never used again: the next
grade starts a fresh one. A worker answers exactly the request it was sent, one at a time, so
no grade is lost or answered twice.

Workers belong to the run that last used them: `stop_workers(settings)` ends them when the run
ends or stops; the ones still there at interpreter exit are killed then.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any, Final

from gradekit._scratch import remove_tree
from gradekit._types import GradeResult, Sample, error_text
from gradekit.process import commands as _children
from gradekit.registry.entries import GraderEntry
from gradekit.run.results import timeout_result
from gradekit.run.settings import Settings

__all__ = ["grade_in_worker", "live_pids", "stop_workers"]

_REAP_SECONDS: Final = 5.0
_START_SECONDS: Final = 60.0
_IDLE_KEPT: Final = 2 * (os.cpu_count() or 1) + 4  # each holds a Python (~25 MB)
_SIGNALLED: Final = 128  # bubblewrap exits with 128 + N when its command dies of signal N

Spec = tuple[Any, ...]


class _Worker:
    """One warm child: its connection, its process, the payloads it holds already."""

    def __init__(self, spec: Spec, connection: Any, process: Any, tmp: str | None) -> None:
        self.spec = spec
        self.connection = connection
        self.process = process
        self.pid: int = process.pid
        self.tmp = tmp  # its private temp folder on the host (None in bubblewrap)
        self.known: set[int] = set()
        self.owner: Settings | None = None
        _children.child_started(self.pid, group=True)

    def exit_code(self) -> int | None:
        """How it ended, negative for a signal (as multiprocessing reports it)."""
        if isinstance(self.process, subprocess.Popen):
            try:
                code = self.process.wait(_REAP_SECONDS)
            except subprocess.TimeoutExpired:
                return None
            return -(code - _SIGNALLED) if code > _SIGNALLED else int(code)
        self.process.join(_REAP_SECONDS)
        exitcode: int | None = self.process.exitcode
        return exitcode

    def kill(self) -> None:
        """Kill it with its process group (what the grader started) and reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.process.kill()
        self.connection.close()
        if isinstance(self.process, subprocess.Popen):
            self.process.wait()
        else:
            self.process.join(_REAP_SECONDS)
        _children.child_ended(self.pid)
        if self.tmp is not None:
            remove_tree(Path(self.tmp))


_lock = threading.Lock()
_idle: dict[Spec, list[_Worker]] = {}
_idle_order: list[_Worker] = []  # oldest first, for the bound on idle workers
_busy: set[_Worker] = set()
_payloads: dict[int, tuple[Any, int, tuple[str, Any]]] = {}  # id(grader) -> (it, key, payload)
_next_key = [0]


def live_pids() -> list[int]:
    """The pids of the workers alive now (idle or grading)."""
    with _lock:
        return sorted(worker.pid for worker in [*_idle_order, *_busy])


def stop_workers(settings: Settings | None = None) -> None:
    """Kill the workers last used by the run of `settings` (every worker when None), grading
    or idle: the run ends or stops. A grade in progress gets an error result."""
    with _lock:
        chosen = [w for w in [*_idle_order, *_busy] if settings is None or w.owner is settings]
        for worker in chosen:
            _forget(worker)
    for worker in chosen:
        worker.kill()


def _forget(worker: _Worker) -> None:
    """Take `worker` off the lists (the lock held)."""
    _busy.discard(worker)
    if worker in _idle_order:
        _idle_order.remove(worker)
        _idle[worker.spec].remove(worker)


def grade_in_worker(
    entry: GraderEntry, sample: Sample, seconds: float, settings: Settings, jailed: bool
) -> GradeResult:
    """Grade `sample` with `entry` in a warm worker (in bubblewrap when `jailed`); kill the
    worker after `seconds`. Blocks the calling (pool) thread until it answers, dies or is
    killed."""
    from gradekit.run.isolation import _death, _paths

    paths = _paths(settings)
    spec = _spec(paths, sample, settings, jailed)
    try:
        worker = _take(spec, settings, paths, jailed)
    except Exception as error:
        text = f"{error_text(error)} (starting a child process for grader '{entry.name}')"
        return GradeResult.of_error(entry.kind, entry.name, text)
    key, payload = _payload_of(entry)
    healthy = False
    try:
        try:
            worker.connection.send((key, None if key in worker.known else payload, sample))
            worker.known.add(key)
            if not worker.connection.poll(seconds):
                return timeout_result(entry, seconds)
            result, healthy = worker.connection.recv()
        except (EOFError, OSError):
            return GradeResult.of_error(entry.kind, entry.name, _death(entry, worker.exit_code()))
        value: GradeResult = result
        return value
    finally:
        _give_back(worker, healthy)


def _spec(paths: list[str], sample: Sample, settings: Settings, jailed: bool) -> Spec:
    """What makes two workers interchangeable: in bubblewrap, what the sandbox shows (the
    sample's workspace among it)."""
    if not jailed:
        return (False, settings.memory_limit_mb, tuple(paths))
    from gradekit.run.jailed import _visible, _working_folder

    visible = tuple(_visible(paths, sample))
    return (True, settings.memory_limit_mb, tuple(paths), visible, _working_folder(paths))


def _take(spec: Spec, settings: Settings, paths: list[str], jailed: bool) -> _Worker:
    with _lock:
        idle = _idle.get(spec)
        worker = idle.pop() if idle else None
        if worker is not None:
            _idle_order.remove(worker)
            _busy.add(worker)
            worker.owner = settings
            return worker
    worker = _spawn(spec, settings, paths, jailed)
    with _lock:
        _busy.add(worker)
        worker.owner = settings
    _await_ready(worker)
    return worker


def _await_ready(worker: _Worker) -> None:
    """Wait for a new worker to be ready (a Python start: not part of any grade's timeout)."""
    from gradekit.run.worker_child import READY

    try:
        ready = worker.connection.poll(_START_SECONDS) and worker.connection.recv() == READY
    except (EOFError, OSError):
        ready = False
    if not ready:
        _give_back(worker, healthy=False)
        raise ChildProcessError(
            f"a worker process did not start within {_START_SECONDS:g}s (exit code "
            f"{worker.exit_code()}); check that gradekit imports in a child process"
        )


def _give_back(worker: _Worker, healthy: bool) -> None:
    evicted: list[_Worker] = []
    with _lock:
        if worker not in _busy:  # stopped meanwhile: killed already
            return
        _busy.discard(worker)
        if healthy:
            _idle.setdefault(worker.spec, []).append(worker)
            _idle_order.append(worker)
            while len(_idle_order) > _IDLE_KEPT:
                oldest = _idle_order[0]
                _forget(oldest)
                evicted.append(oldest)
        else:
            evicted.append(worker)
    for each in evicted:
        each.kill()


def _payload_of(entry: GraderEntry) -> tuple[int, tuple[str, Any]]:
    """The grader's payload (pickled once per grader object) and its key."""
    from gradekit.run.isolation import _payload

    grader = entry.grader
    with _lock:
        known = _payloads.get(id(grader))
        if known is not None and known[0] is grader:
            return known[1], known[2]
    payload = _payload(entry)
    with _lock:
        if len(_payloads) > 4096:
            _payloads.clear()
        _next_key[0] += 1
        key = _next_key[0]
        _payloads[id(grader)] = (grader, key, payload)  # holding it keeps its id unique
    return key, payload


def _spawn(spec: Spec, settings: Settings, paths: list[str], jailed: bool) -> _Worker:
    from gradekit.run.worker_start import start

    if jailed:
        connection, process, tmp = start(settings.memory_limit_mb, paths, spec[3], spec[4])
    else:
        connection, process, tmp = start(settings.memory_limit_mb, paths, None, None)
    return _Worker(spec, connection, process, tmp)


@atexit.register
def _kill_at_exit() -> None:
    stop_workers()
