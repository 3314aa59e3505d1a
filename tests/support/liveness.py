"""Whether processes still run, for the tests that check a kill: one reading of `/proc`.

On the test path (`pythonpath` in pyproject.toml), for every test folder.
"""

from __future__ import annotations

import time
from collections.abc import Iterable


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone_within(pids: Iterable[int], seconds: float) -> list[int]:
    """The pids of `pids` still running after `seconds`. A SIGKILL is queued by kill() and
    acted on when the process next runs: on a busy machine a killed process may still show as
    running for a moment, so a test waits this long for a kill already sent to land."""
    left = list(pids)
    deadline = time.monotonic() + seconds
    while True:
        left = [pid for pid in left if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)
