"""Warm workers: long-lived children that run one request after another, killed and replaced
at a timeout or a crash (the parent's side; the child's is `worker_child`).

A request takes an idle worker of the same `WorkerSpec` (same work function, sandbox and view
of the files, same memory limit, same `sys.path`), or starts one, sends it the request and
waits up to the timeout. The worker is forked from the fork server (multiprocessing's
`forkserver`, `spawn` where there is none; never from the caller itself, whose threads may
hold locks), or is a fresh Python in bubblewrap that sees the system, its Python, the folders
on its import path, the folders of the modules loaded here, and the request's workspace,
read-only; an empty private `/tmp` (its TMPDIR); no home folder. It keeps gradekit's
environment (a model-graded judge needs its API key) and network.

A worker that outlives the timeout is killed with its whole process group (in bubblewrap: its
PID namespace) and the request raises `WorkerTimeout`; one that dies (a segfault, `os._exit`,
a MemoryError) raises `WorkerDied`. Either way it is never used again: the next request starts
a fresh one. A worker answers exactly the request it was sent, one at a time, so no request
is lost or answered twice.

What a worker does with a request is the caller's: `WorkerSpec.work`, a module-level function
`work(payload, item) -> (answer, healthy)` that the child imports by name (process isolation's
is `gradekit.run.isolation.grade_payload`). A payload (a pickled grader) is sent once per
worker and kept there under a key.

Workers belong to the owner (a run's settings) that last used them: `stop_workers(owner)` ends
them when the run ends or stops; the ones still there at interpreter exit are killed then.

Imports: the core (`gradekit.core.scratch`), `bubblewrap` (the jail, the mode's markers),
`commands` (the children registry) and `worker_child` (the worker's main).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import multiprocessing
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit.core.scratch import remove_tree, scratch_prefix
from gradekit.process import bubblewrap
from gradekit.process.commands import child_ended, child_started
from gradekit.process.worker_child import READY, serve

__all__ = [
    "WorkerDied",
    "WorkerSpec",
    "WorkerStartError",
    "WorkerTimeout",
    "ask",
    "live_pids",
    "stop_workers",
    "visible_folders",
    "working_folder",
]

_REAP_SECONDS: Final = 5.0
_START_SECONDS: Final = 60.0
_IDLE_KEPT: Final = 2 * (os.cpu_count() or 1) + 4  # each holds a whole Python (bench/RESULTS.md)
_SIGNALLED: Final = 128  # bubblewrap exits with 128 + N when its command dies of signal N

Work = Callable[[Any, Any], tuple[Any, bool]]


@attrs.frozen
class WorkerSpec:
    """What makes two workers interchangeable: the `work` they do (a module-level function,
    imported by name in the child), the memory limit (MiB) and the `sys.path` they get; in
    bubblewrap (`visible` not None), what the sandbox shows read-only and the working folder
    `cwd`."""

    work: Work
    memory_limit_mb: int | None
    paths: tuple[str, ...]
    visible: tuple[str, ...] | None = None
    cwd: str | None = None


class WorkerStartError(Exception):
    """No worker could be started; `cause` is why."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class WorkerTimeout(Exception):
    """The worker did not answer within `seconds`; it was killed."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {seconds:g}s")
        self.seconds = seconds


class WorkerDied(Exception):
    """The worker ended before it answered (`exit_code` negative for a signal, None when it
    could not be reaped), or `lost` says why its answer could not be sent."""

    def __init__(self, exit_code: int | None, lost: str | None = None) -> None:
        super().__init__(lost or f"the worker ended with exit code {exit_code}")
        self.exit_code = exit_code
        self.lost = lost


class _Worker:
    """One warm child: its connection, its process, the payloads it holds already."""

    def __init__(self, spec: WorkerSpec, connection: Any, process: Any, tmp: str | None) -> None:
        self.spec = spec
        self.connection = connection
        self.process = process
        self.pid: int = process.pid
        self.tmp = tmp  # its private temp folder on the host (None in bubblewrap)
        self.known: set[int] = set()
        self.owner: object = None
        child_started(self.pid, group=True)

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
        """Kill it with its process group (what the work started) and reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.process.kill()
        self.connection.close()
        if isinstance(self.process, subprocess.Popen):
            self.process.wait()
        else:
            self.process.join(_REAP_SECONDS)
        child_ended(self.pid)
        if self.tmp is not None:
            remove_tree(Path(self.tmp))


_lock = threading.Lock()
_idle: dict[WorkerSpec, list[_Worker]] = {}
_idle_order: list[_Worker] = []  # oldest first, for the bound on idle workers
_busy: set[_Worker] = set()
_payloads: dict[int, tuple[Any, int, Any]] = {}  # id(source) -> (it, key, payload)
_next_key = [0]


def live_pids() -> list[int]:
    """The pids of the workers alive now (idle or working)."""
    with _lock:
        return sorted(worker.pid for worker in [*_idle_order, *_busy])


def stop_workers(owner: object = None) -> None:
    """Kill the workers last used by `owner` (every worker when None), working or idle: the
    run ends or stops. A request in progress raises `WorkerDied`."""
    with _lock:
        chosen = [w for w in [*_idle_order, *_busy] if owner is None or w.owner is owner]
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


def ask(
    spec: WorkerSpec,
    source: object,
    payload: Callable[[], Any],
    item: Any,
    *,
    seconds: float,
    owner: object,
) -> Any:
    """The answer of a warm worker of `spec` to `item`; the worker is killed after `seconds`.

    `payload()` makes what `spec.work` gets with `item`; it is made once per `source` object
    (a grader) and sent once per worker. Blocks the calling (pool) thread until the worker
    answers, dies or is killed. Raises `WorkerStartError`, `WorkerTimeout` or `WorkerDied`.
    """
    try:
        worker = _take(spec, owner)
    except Exception as error:
        raise WorkerStartError(error) from error
    key, data = _payload_of(source, payload)
    healthy = False
    try:
        try:
            worker.connection.send((key, None if key in worker.known else data, item))
            worker.known.add(key)
            answered = worker.connection.poll(seconds)
            if answered:
                answer, healthy, lost = worker.connection.recv()
        except (EOFError, OSError):
            raise WorkerDied(worker.exit_code()) from None
        if not answered:
            raise WorkerTimeout(seconds)
        if lost is not None:
            raise WorkerDied(None, lost)
        return answer
    finally:
        _give_back(worker, healthy)


def _take(spec: WorkerSpec, owner: object) -> _Worker:
    with _lock:
        idle = _idle.get(spec)
        worker = idle.pop() if idle else None
        if worker is not None:
            _idle_order.remove(worker)
            _busy.add(worker)
            worker.owner = owner
            return worker
    worker = _start(spec)
    with _lock:
        _busy.add(worker)
        worker.owner = owner
    _await_ready(worker)
    return worker


def _await_ready(worker: _Worker) -> None:
    """Wait for a new worker to be ready (a Python start: not part of any request's timeout)."""
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


def _payload_of(source: object, payload: Callable[[], Any]) -> tuple[int, Any]:
    """The payload of `source` (made once per source object) and its key."""
    with _lock:
        known = _payloads.get(id(source))
        if known is not None and known[0] is source:
            return known[1], known[2]
    data = payload()
    with _lock:
        if len(_payloads) > 4096:
            _payloads.clear()
        _next_key[0] += 1
        key = _next_key[0]
        _payloads[id(source)] = (source, key, data)  # holding it keeps its id unique
    return key, data


@atexit.register
def _kill_at_exit() -> None:
    stop_workers()


# -- what a worker in bubblewrap sees ------------------------------------------------------------


def visible_folders(paths: Iterable[str], workspace: str | os.PathLike[str] | None) -> list[str]:
    """What a worker in bubblewrap must read: its Python, its import `paths`, where its
    modules came from, and the `workspace` of the request."""
    folders = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    folders += [os.path.abspath(path or os.curdir) for path in paths]
    folders += _module_folders()
    if workspace is not None:
        folders.append(os.path.abspath(workspace))
    return folders


def _module_folders() -> list[str]:
    """The folders loaded modules were imported from (editable installs live outside
    sys.path), computed again only when modules were loaded since."""
    global _known  # noqa: PLW0603 - a cache of the last answer
    count = len(sys.modules)
    if _known[0] != count:
        _known = (count, _import_roots())
    return _known[1]


_known: tuple[int, list[str]] = (-1, [])


def _import_roots() -> list[str]:
    found = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        name = getattr(module, "__name__", "")
        if not isinstance(file, str) or not os.path.isabs(file):
            continue
        folder = os.path.dirname(file)
        for _ in range(name.count(".") + (file.endswith("__init__.py"))):
            folder = os.path.dirname(folder)
        found.add(folder)
    return sorted(found)


def working_folder(paths: Iterable[str]) -> str:
    """gradekit's working folder when a worker in bubblewrap can see it (on its import path),
    else /."""
    here = os.getcwd()
    visible = {os.path.abspath(path or os.curdir) for path in paths}
    return here if here in visible and here not in bubblewrap.homes() else "/"


# -- starting a worker ---------------------------------------------------------------------------
# Always from one long-lived spawning thread: bubblewrap dies with the thread that started it
# (`--die-with-parent` is the parent *thread*'s death), and the pool threads that ask come and
# go: a worker started by one of them would be killed when that thread leaves the pool.

Started = tuple[Any, Any, str | None]  # (connection, process, private temp folder or None)

_spawn_lock = threading.Lock()
_requests: queue.SimpleQueue[tuple[Future[Started], WorkerSpec]] | None = None


def _start(spec: WorkerSpec) -> _Worker:
    """Start a worker of `spec`. Blocks until it is started (not until it is ready: it says
    so on its connection)."""
    future: Future[Started] = Future()
    _spawner().put((future, spec))
    connection, process, tmp = future.result()
    return _Worker(spec, connection, process, tmp)


def _spawner() -> queue.SimpleQueue[tuple[Future[Started], WorkerSpec]]:
    global _requests  # noqa: PLW0603 - one spawning thread per process, started on demand
    with _spawn_lock:
        if _requests is None:
            _requests = queue.SimpleQueue()
            thread = threading.Thread(
                target=_loop, args=(_requests,), name="gradekit-spawner", daemon=True
            )
            thread.start()
        return _requests


def _loop(requests: queue.SimpleQueue[tuple[Future[Started], WorkerSpec]]) -> None:
    while True:
        future, spec = requests.get()
        try:
            started = _forked(spec) if spec.visible is None else _jailed(spec, spec.visible)
        except BaseException as error:
            future.set_exception(error)
        else:
            future.set_result(started)


@functools.cache
def _fork_context(work_module: str) -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # `_forkserver` makes the server's children ignore Ctrl-C from their first instruction
        # (before `serve` runs), so a terminal's Ctrl-C prints no traceback from them; the
        # work's module is loaded once in the server, not in every worker.
        context.set_forkserver_preload(
            [work_module, "gradekit.process.worker_child", "gradekit.process._forkserver"]
        )
        return context
    return multiprocessing.get_context("spawn")


def _forked(spec: WorkerSpec) -> Started:
    context = _fork_context(spec.work.__module__)
    ours, theirs = context.Pipe(duplex=True)
    tmp = tempfile.mkdtemp(prefix=scratch_prefix("tmp"))
    process = context.Process(
        target=serve,
        args=(theirs, spec.work, spec.memory_limit_mb, list(spec.paths), tmp),
        name="gradekit-worker",
        daemon=True,
    )
    try:
        process.start()
    except BaseException:
        ours.close()
        remove_tree(Path(tmp))
        raise
    finally:
        theirs.close()
    return ours, process, tmp


def _jailed(spec: WorkerSpec, visible: Sequence[str]) -> Started:
    """A fresh Python inside bubblewrap running `worker_child.main(FD)`, FD the child's end of
    a socket pair, and a Connection on the parent's end, sent the worker's settings. The
    sandbox sees `visible` (and the system) read-only and starts in `spec.cwd`; the child
    keeps gradekit's environment, with an empty private TMPDIR. Raises what starting
    bubblewrap raises, leaving no socket open."""
    ours, theirs = socket.socketpair()
    fd = theirs.fileno()
    env = {**os.environ, "TMPDIR": "/tmp", bubblewrap.INSIDE: "1"}
    main = f"from gradekit.process.worker_child import main; main({fd})"
    try:
        with bubblewrap.jail(
            bubblewrap.bwrap_executable(), readonly=visible, network=True, cwd=spec.cwd
        ) as box:
            process = subprocess.Popen(
                [*box.argv, sys.executable, "-c", main],
                stdin=subprocess.DEVNULL,
                pass_fds=(fd, *box.fds),
                start_new_session=True,
                env=env,
            )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    connection = Connection(ours.detach())
    with contextlib.suppress(OSError):  # it died at once: the request will see it
        connection.send((spec.work, spec.memory_limit_mb, list(spec.paths)))
    return connection, process, None
