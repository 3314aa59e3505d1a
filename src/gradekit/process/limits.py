"""A command's resource limits without Python code between fork and exec.

Setting limits with `setrlimit` in a `preexec_fn` makes `subprocess` fork the whole gradekit
process and run Python in the child before it execs (about 5-20 ms a command on a busy 2-core
machine, against 2 ms for the `vfork` path it takes without one). So the limits are set by a
program put in front of the command, which sets them on itself, then execs the command in the
same process (same pid, same process group): gradekit's own launcher (`launcher`, built on
first use where a C compiler is installed), else util-linux's `prlimit`; where neither runs,
the `preexec_fn` stays (`process.run` decides).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Sequence
from typing import Final

from gradekit.process.launcher import launcher, runs_true

__all__ = ["exec_failure", "launched", "limit_failure", "limit_prefix", "starts_as_is"]

_FAILED: Final = ("gradekit-limits: failed to execute ", "prlimit: failed to execute ")
_EXEC_CODES: Final = (126, 127)  # the exit codes of both when the exec itself failed
_REFUSED: Final = "gradekit-limits: cannot set the limits: "
_REFUSED_CODE: Final = 125  # the launcher's exit code when a limit could not be set
# prlimit's whole stderr when it could not read or set a limit; it then exits 1, as a command
# may (a command whose whole stderr is these words is taken for prlimit's refusal).
_PRLIMIT_REFUSED: Final = re.compile(
    r"prlimit: (failed to set the [A-Z]+ resource limit: .+|failed to parse [A-Z]+ limit)"
)
_PRLIMIT_REFUSED_CODE: Final = 1
_ERRNO: Final = re.compile(r"\(errno (\d{1,4})\)$")  # how the launcher ends its reasons


@functools.cache
def _prlimit() -> str | None:
    """The `prlimit` that works here (probed once), or None."""
    found = shutil.which("prlimit")
    return found if found is not None and runs_true((found, "--core=0", "--")) else None


def limit_prefix(
    memory: int | None, cpu: int | None, report: int | None = None
) -> tuple[str, ...] | None:
    """The prefix setting no core dumps, the data limit `memory` (bytes) and `cpu` seconds
    (the hard limit one more): the launcher's, else `prlimit ... --`; None where neither runs.

    `report` is the descriptor the launcher writes its own failures to (None: stderr), closed
    when the command starts, so the command cannot forge them; `prlimit` writes them to
    stderr (`launched` tells the two apart)."""
    built = launcher()
    if built is not None:
        # Whole seconds, as RLIMIT_CPU counts them (and as `prlimit` reads `1.5`: 1).
        return (
            built,
            "-" if report is None else str(report),
            "-" if memory is None else str(memory),
            "-" if cpu is None else str(int(cpu)),
        )
    prlimit = _prlimit()
    if prlimit is None:
        return None
    argv = [prlimit, "--core=0"]
    if memory is not None:
        argv.append(f"--data={memory}:{memory}")
    if cpu is not None:
        argv.append(f"--cpu={cpu}:{cpu + 1}")
    argv.append("--")
    return tuple(argv)


def launched(limiter: Sequence[str]) -> bool:
    """True when `limiter` (from `limit_prefix`) is the launcher's, which reports its own
    failures on the report pipe; False for `prlimit`'s, which says them on stderr."""
    return bool(limiter) and os.path.basename(limiter[0]) != "prlimit"


def starts_as_is(path: str) -> bool:
    """Whether `path` is an ELF binary or a `#!` script: what `execve` runs. `prlimit` runs
    anything else with `/bin/sh` (as glibc's `execvp` does), where a command started directly
    fails with `Exec format error`: such a command keeps the `setrlimit` path, whichever
    prefix would set its limits."""
    try:
        with open(path, "rb") as file:
            head = file.read(4)
    except OSError:
        return False
    return head == b"\x7fELF" or head.startswith(b"#!")


def exec_failure(exit_code: int, stderr: str) -> str | None:
    """Why the launcher or `prlimit` could not exec the command (`Permission denied`...), or
    None when the command ran."""
    if exit_code not in _EXEC_CODES or not stderr.startswith(_FAILED):
        return None
    return _worded(stderr.rpartition(": ")[2]) or stderr.strip()


def limit_failure(limiter: Sequence[str], exit_code: int, stderr: str) -> str | None:
    """Why the `limiter` prefix (the launcher's or `prlimit`'s, `limit_prefix`) could not set
    the command's limits (`Operation not permitted`: a limit above the hard limit gradekit
    itself runs under), or None when it set them."""
    # Told from the prefix itself: asking `_prlimit()` would probe prlimit (a command run)
    # in a process that only ever uses the launcher.
    if limiter and not launched(limiter):
        if exit_code != _PRLIMIT_REFUSED_CODE:
            return None
        said = _PRLIMIT_REFUSED.fullmatch(stderr.strip())
        return said[1] if said else None
    if exit_code != _REFUSED_CODE or not stderr.startswith(_REFUSED):
        return None
    return _worded(stderr[len(_REFUSED) :]) or "unknown reason"


def _worded(reason: str) -> str:
    """The reason the launcher or `prlimit` gave, in Python's words (`os.strerror`) where the
    launcher gave its errno: the same whichever C library the launcher was built with."""
    reason = reason.strip()
    number = _ERRNO.search(reason)
    return os.strerror(int(number[1])) if number else reason
