"""A worker pool of daemon threads whose hung workers can be abandoned.

`concurrent.futures.ThreadPoolExecutor` joins its workers at interpreter exit, so one grader
stuck in `while True` would keep the process alive forever. Here every worker is a daemon
thread, nothing joins them, and a worker running a task that timed out is abandoned: a fresh
worker takes its place at once, and the old one leaves the pool if its task ever returns.
"""

from __future__ import annotations

import contextvars
import itertools
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any, Final

__all__ = ["TIMED_OUT", "DaemonPool", "Ticket"]

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
