"""Running a coroutine to completion from sync code, in or out of a running event loop.

For sync `grade` methods of graders whose real work is async (composites, the `prompt` kind),
for `gradekit.grade` and for the runner's event loop. `run_loop` is `asyncio.run` for loops
that may hold abandoned graders: an async grader cut off at its timeout is cancelled and not
waited for (it may catch the cancellation and go on), so the loop ends without it."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, TypeVar

__all__ = ["ABANDON_GRACE", "abandon", "run_loop", "run_sync"]

T = TypeVar("T")

ABANDON_GRACE: Final = 1.0
"""Seconds a loop's last tasks (abandoned graders, cancelled again) get to end when the loop
ends, before it closes without them."""

_DESTROYED_PENDING: Final = "Task was destroyed but it is pending!"


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even where an event loop is already
    running in this thread (a notebook): then on a fresh loop in a helper thread. From the
    main thread too, so that a KeyboardInterrupt a grader raises is never taken for Ctrl-C."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if threading.current_thread() is not threading.main_thread():
            return run_loop(_call(make))
    box: list[Any] = []

    def target() -> None:
        try:
            box.append((True, run_loop(_call(make))))
        except BaseException as error:
            box.append((False, error))

    # The helper thread sees the caller's context variables (the run context among them).
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(target,), name="gradekit-sync", daemon=True)
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    result: T = value
    return result


async def _call(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


def abandon(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and leave it: it is not awaited, and whatever it ends with (a result, an
    error, nothing) is dropped."""
    task.cancel()
    task.add_done_callback(_dropped)


def _dropped(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` on a new event loop, as `asyncio.run` does, except at the end: tasks still
    pending then are cancelled and get ABANDON_GRACE seconds, in all, to end; the loop then
    closes without those that did not (where `asyncio.run` would wait for them forever)."""
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_quiet_about_abandoned)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            _end_pending(loop)
            _bounded(loop, loop.shutdown_asyncgens())
            _bounded(loop, loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _end_pending(loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        abandon(task)
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=ABANDON_GRACE))


def _bounded(loop: asyncio.AbstractEventLoop, step: Coroutine[Any, Any, None]) -> None:
    """Run a shutdown step for at most ABANDON_GRACE seconds (a hung thread of the default
    executor, an async generator that never closes, would hold it forever)."""
    task = loop.create_task(step)
    loop.run_until_complete(asyncio.wait((task,), timeout=ABANDON_GRACE))
    if not task.done():
        abandon(task)


def _quiet_about_abandoned(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    # A task left behind when the loop closed is an abandoned grader, already reported as
    # timed out: no warning for it. Anything else goes to asyncio's own handler.
    if context.get("message") == _DESTROYED_PENDING:
        return
    loop.default_exception_handler(context)
