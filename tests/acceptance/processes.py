"""Helpers for the acceptance tests that start `gradekit run` in the background and stop it with a
real signal: start it, wait for it to get somewhere, see what it left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from cli_support import gradekit_command


def start(folder: Path, *args: str, tmp: Path | None = None) -> subprocess.Popen[str]:
    """`gradekit run ARGS` in `folder`, in a session of its own, TMPDIR `tmp` when given."""
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    if tmp is not None:
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    return subprocess.Popen(
        [gradekit_command(), "run", *args],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def wait_until(process: subprocess.Popen[str], ready: Callable[[], bool], what: str) -> None:
    """Wait (60 s at most) until `ready()`, while the run is still going."""
    deadline = time.monotonic() + 60
    while not ready():
        if process.poll() is not None:
            raise AssertionError(f"the run ended before {what}: {process.communicate()}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def lines(path: Path) -> int:
    """Complete lines in `path` (0 when it does not exist)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0


def pids(path: Path) -> list[int]:
    """The pids the test's commands wrote into `path`, one a line."""
    return [int(line) for line in path.read_text().split()] if path.exists() else []


@contextlib.contextmanager
def killed_at_the_end(pid_file: Path, process: subprocess.Popen[str]) -> Iterator[None]:
    """Whatever the test finds, leave no process of it running (by pid, never by name)."""
    try:
        yield
    finally:
        if process.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
        for pid in pids(pid_file):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
