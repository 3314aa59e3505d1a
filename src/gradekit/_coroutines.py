"""Running a coroutine to completion from sync code, in or out of a running event loop.

For sync `grade` methods of graders whose real work is async (composites, the `prompt` kind)
and for `gradekit.grade`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even where an event loop is already
    running in this thread (a notebook): then on a fresh loop in a helper thread. From the
    main thread too, so that a KeyboardInterrupt a grader raises is never taken for Ctrl-C."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if threading.current_thread() is not threading.main_thread():
            return asyncio.run(_call(make))
    box: list[Any] = []

    def target() -> None:
        try:
            box.append((True, asyncio.run(_call(make))))
        except BaseException as error:
            box.append((False, error))

    thread = threading.Thread(target=target, name="gradekit-sync", daemon=True)
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    result: T = value
    return result


async def _call(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
