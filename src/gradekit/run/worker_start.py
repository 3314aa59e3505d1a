"""Starting a warm worker (see `gradekit.run.workers`): forked from the fork server, or a fresh
Python in bubblewrap, always from one long-lived spawning thread.

Bubblewrap dies with the thread that started it (`--die-with-parent` is the parent *thread*'s
death), and the pool threads that grade come and go: a worker started by one of them would be
killed when that thread leaves the pool.
"""

from __future__ import annotations

import contextlib
import queue
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from gradekit._scratch import remove_tree, scratch_prefix

__all__ = ["start"]

Started = tuple[Any, Any, str | None]  # (connection, process, private temp folder or None)

_lock = threading.Lock()
_requests: queue.SimpleQueue[tuple[Future[Started], tuple[Any, ...]]] | None = None


def start(
    memory_limit_mb: int | None,
    paths: list[str],
    visible: Sequence[str] | None,
    cwd: str | None,
) -> Started:
    """Start a worker: in bubblewrap showing `visible` (read-only) with working folder `cwd`,
    or, when `visible` is None, forked from the fork server. Blocks until it is started (not
    until it is ready: it says so on its connection)."""
    future: Future[Started] = Future()
    _spawner().put((future, (memory_limit_mb, paths, visible, cwd)))
    return future.result()


def _spawner() -> queue.SimpleQueue[tuple[Future[Started], tuple[Any, ...]]]:
    global _requests  # noqa: PLW0603 - one spawning thread per process, started on demand
    with _lock:
        if _requests is None:
            _requests = queue.SimpleQueue()
            thread = threading.Thread(
                target=_loop, args=(_requests,), name="gradekit-spawner", daemon=True
            )
            thread.start()
        return _requests


def _loop(requests: queue.SimpleQueue[tuple[Future[Started], tuple[Any, ...]]]) -> None:
    while True:
        future, (memory_limit_mb, paths, visible, cwd) = requests.get()
        try:
            if visible is None:
                started = _forked(memory_limit_mb, paths)
            else:
                started = _jailed(memory_limit_mb, paths, visible, cwd)
        except BaseException as error:
            future.set_exception(error)
        else:
            future.set_result(started)


def _forked(memory_limit_mb: int | None, paths: list[str]) -> Started:
    from gradekit.run.isolation import _mp_context
    from gradekit.run.worker_child import serve

    context = _mp_context()
    ours, theirs = context.Pipe(duplex=True)
    tmp = tempfile.mkdtemp(prefix=scratch_prefix("tmp"))
    process = context.Process(
        target=serve,
        args=(theirs, memory_limit_mb, paths, tmp),
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


def _jailed(
    memory_limit_mb: int | None, paths: list[str], visible: Sequence[str], cwd: str | None
) -> Started:
    from gradekit.run.jailed import start_in_jail

    connection, process = start_in_jail("gradekit.run.worker_child", visible, cwd)
    with contextlib.suppress(OSError):  # it died at once: the grade will see it
        connection.send((memory_limit_mb, paths))
    return connection, process, None
