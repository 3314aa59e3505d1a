"""A started command's streams: its output read as it comes and capped, its input fed, until
the leader exits, the deadline passes or the grade is cancelled; then the whole process group
is killed and what is left in the pipes collected (for `process.run`)."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from typing import IO, Final

__all__ = ["CHUNK", "Capture", "communicate", "kill_group"]

CHUNK: Final = 65536
"""Bytes read from, or written to, a pipe at a time."""
_POLL: Final = 0.1  # seconds between checks for cancellation while waiting
_DRAIN: Final = 1.0  # seconds to collect what is left in the pipes after the group is killed


class Capture:
    """One output stream, kept up to `limit` bytes; the rest is counted and dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        if self.dropped:
            text += (
                f"\n[gradekit: output cut at {self.limit} bytes; {self.dropped} more bytes dropped]"
            )
        return text


def _exited(process: subprocess.Popen[bytes]) -> bool:
    # WNOWAIT leaves the leader a zombie, so its process group id cannot be reused before the
    # group is killed.
    info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None and info.si_pid == process.pid


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command's whole process group (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def communicate(
    process: subprocess.Popen[bytes],
    data: bytes | None,
    deadline: float,
    output_limit: int,
    cancel: threading.Event | None,
) -> tuple[Capture, Capture, bool]:
    """Feed `data`, read stdout and stderr (each kept up to `output_limit` bytes) until the
    leader exits, `deadline` (a monotonic instant) passes or `cancel` is set; the group is
    then killed. Returns (stdout, stderr, whether the deadline ended it)."""
    assert process.stdout is not None and process.stderr is not None
    out, err = Capture(output_limit), Capture(output_limit)
    pending = memoryview(data or b"")
    selector, pidfd = _watch(process, out, err, bool(pending))
    timed_out = False
    killed_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if killed_at is None:
                stop = now >= deadline or (cancel is not None and cancel.is_set())
                timed_out = now >= deadline
                if stop or _exited(process):
                    # Leftover children would hold the pipes open: kill the whole group, then
                    # collect what is already in the pipes.
                    kill_group(process)
                    killed_at = now
            reading = any(key.data is not None for key in selector.get_map().values())
            if killed_at is not None and (not reading or now - killed_at > _DRAIN):
                break
            if killed_at is None:
                wait = max(min(_POLL, deadline - now), 0.0)
            else:
                wait = _DRAIN - (now - killed_at)
            for key, _ in selector.select(wait):
                if key.fileobj is process.stdin:
                    pending = _feed(process.stdin, pending)
                    if not pending:
                        selector.unregister(process.stdin)
                        process.stdin.close()
                elif key.data is None:  # the pidfd: the leader has exited
                    selector.unregister(key.fileobj)
                else:
                    chunk = os.read(key.fd, CHUNK)
                    if chunk:
                        key.data.add(chunk)
                    else:
                        selector.unregister(key.fileobj)
    finally:
        selector.close()
        if pidfd is not None:
            os.close(pidfd)
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(OSError):
                process.stdin.close()
    return out, err, timed_out


def _watch(
    process: subprocess.Popen[bytes], out: Capture, err: Capture, feeding: bool
) -> tuple[selectors.BaseSelector, int | None]:
    """A selector over the pipes (data: their capture) and the leader's pidfd (data: None)."""
    assert process.stdout is not None and process.stderr is not None
    selector = selectors.DefaultSelector()
    for stream, capture in ((process.stdout, out), (process.stderr, err)):
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ, capture)
    # A pidfd wakes the loop the moment the leader exits; without one, poll every _POLL.
    pidfd = os.pidfd_open(process.pid) if hasattr(os, "pidfd_open") else None
    if pidfd is not None:
        selector.register(pidfd, selectors.EVENT_READ, None)
    if process.stdin is not None:
        os.set_blocking(process.stdin.fileno(), False)
        if feeding:
            selector.register(process.stdin, selectors.EVENT_WRITE, None)
        else:
            process.stdin.close()
    return selector, pidfd


def _feed(stdin: IO[bytes], pending: memoryview) -> memoryview:
    """Write what the pipe takes now; a reader that went away gets nothing more."""
    try:
        written = os.write(stdin.fileno(), pending[:CHUNK])
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        return pending[len(pending) :]
    return pending[written:]
