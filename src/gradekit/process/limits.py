"""A command's resource limits without Python code between fork and exec, and gradekit's
launcher that sets them (`launcher.c`, built once per machine on first use).

Setting limits with `setrlimit` in a `preexec_fn` makes `subprocess` fork the whole gradekit
process and run Python in the child before it execs, several times the cost of the `vfork`
path it takes without one (bench/RESULTS.md, "`program` graders by jobs"). So the limits are
set by a program put in front of the command, which sets them on itself, then execs the
command in the same process (same pid, same process group): gradekit's own launcher, else
util-linux's `prlimit`; where neither runs, the `preexec_fn` stays (`commands.run` decides).

The launcher: util-linux's `prlimit` does the same at a cost of its own, a sizeable part of a
short command (it loads the locale and links `libsmartcols`); the launcher, a program of a few
lines, costs a fraction of that, least when built static with musl (the figures are in
bench/RESULTS.md, "gradekit's own launcher" and "The launcher built with musl"). It is built
with the C compiler (`$CC`, else `musl-gcc` where it is installed, else `cc`; `_recipes`) into
the user's cache folder (`$XDG_CACHE_HOME/gradekit`, else `~/.cache/gradekit`), named by a
hash of its source and of the compilers at hand, and tried once per process before use. It is
run only from a folder no one else could have changed: the folder and the file are the user's
own and no one else can write to them, and no folder above it lets anyone else rename what it
holds (each is the user's or root's, and others cannot write to it, unless it is sticky as
/tmp is). Where there is no compiler, the build fails, the folder is not safe or the launcher
does not run, `launcher()` is None and `prlimit` sets the limits.

Imports: the standard library only.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import platform
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = [
    "SOURCE",
    "exec_failure",
    "launched",
    "launcher",
    "limit_failure",
    "limit_prefix",
    "reset",
    "runs_true",
    "starts_as_is",
]


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


# -- the launcher ------------------------------------------------------------------------------

SOURCE: Final = Path(__file__).with_name("launcher.c")
"""The launcher's C source, shipped with gradekit."""

_BUILD_SECONDS: Final = 60.0
_STALE_SECONDS: Final = 3600.0  # a half-built file this old was left by a process killed mid-build
_SCRATCH: Final = ".gradekit-limits-"

_building = threading.Lock()  # threads starting at once build it once


def launcher() -> str | None:
    """The path of a working launcher (built now if it is not built yet), or None."""
    with _building:
        return _launcher()


def reset() -> None:
    """Forget the launcher found, so that the next `launcher()` looks again (tests, and a
    process whose cache folder setting changed)."""
    with _building:
        _launcher.cache_clear()


def _new_lock() -> None:  # in a forked child: a lock another thread held at the fork stays held
    global _building  # noqa: PLW0603
    _building = threading.Lock()


os.register_at_fork(after_in_child=_new_lock)


@functools.cache
def _launcher() -> str | None:
    try:
        source = SOURCE.read_bytes()
    except OSError:
        return None
    folder = _own_folder()
    if folder is None:
        return None
    recipes = _recipes()
    # Named by the compilers at hand too (their names, not where PATH finds them): musl
    # installed later builds a launcher of its own.
    compilers = [[Path(recipe[0]).name, *recipe[1:]] for recipe in recipes]
    digest = hashlib.sha256(source + repr(compilers).encode()).hexdigest()[:16]
    path = folder / f"gradekit-limits-{digest}-{platform.machine() or 'unknown'}"
    if _own_file(path) and _works(path):
        return str(path)
    if not _build(folder, path, recipes):  # tried as it was built
        return None
    return str(path)


def _own_folder() -> Path | None:
    """The cache folder, made private if it is new; None unless it is the user's own and no
    one else can write to it (a launcher another user could replace must not be run)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # unset, or relative: the XDG spec says to ignore it
        base = os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home folder to put it in (`~` left as it is)
        return None
    folder = Path(base) / "gradekit"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
        real = Path(os.path.realpath(folder))
        above = [os.stat(parent) for parent in real.parents]
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or not _private(info):
        return None
    for parent in above:
        if parent.st_uid not in (0, os.getuid()):
            return None
        if parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX:
            return None
    return folder


def _own_file(path: Path) -> bool:
    """Whether `path` is a regular file of the user's that no one else can write to."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and _private(info)


def _private(info: os.stat_result) -> bool:
    """Whether the file or folder `info` describes is the user's own and no one else can
    write to it."""
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def _recipes() -> list[list[str]]:
    """The compile commands to try, in order, each without its output and source arguments.

    `$CC` when it is set (its words, `ccache gcc` being a compiler too), else musl's
    `musl-gcc` where it is installed, then `cc`; static first, then linked. A static musl
    launcher starts several times faster than a glibc one, static or linked: glibc reads the
    processor's features as it starts, slow under a hypervisor (bench/RESULTS.md)."""
    try:
        words = shlex.split(os.environ.get("CC") or "")
    except ValueError:
        return []
    compilers = [words] if words else [["musl-gcc"], ["cc"]]
    recipes = []
    for compiler in compilers:
        found = shutil.which(compiler[0])
        if found is None:
            continue
        recipes.append([found, *compiler[1:], "-O2", "-static"])
        if Path(found).name != "musl-gcc":  # only a static musl build is worth having
            recipes.append([found, *compiler[1:], "-O2"])
    return recipes


def _build(folder: Path, path: Path, recipes: list[list[str]]) -> bool:
    """Compile the source to `path` by the first of `recipes` (`_recipes`) that builds a
    launcher that works, built beside it and renamed into place, so a process never runs a
    half-written launcher."""
    if not recipes:
        return False
    try:
        _sweep(folder)
        handle, scratch = tempfile.mkstemp(prefix=_SCRATCH, dir=folder)
    except OSError:  # a read-only or full disk: `prlimit` then
        return False
    os.close(handle)
    try:
        for recipe in recipes:
            done = subprocess.run(
                [*recipe, "-o", scratch, str(SOURCE)],
                capture_output=True,
                check=False,
                timeout=_BUILD_SECONDS,
            )
            if done.returncode != 0:
                continue
            os.chmod(scratch, 0o700)
            if _works(Path(scratch)):  # built is not enough: a static build may not run
                os.replace(scratch, path)
                return True
        return False
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(scratch)


def _sweep(folder: Path) -> None:
    """Remove half-built launchers that processes killed mid-build left behind."""
    old = time.time() - _STALE_SECONDS
    for item in folder.glob(_SCRATCH + "*"):
        with contextlib.suppress(OSError):
            if item.lstat().st_mtime < old:
                item.unlink()


def _works(path: Path) -> bool:
    """Whether the launcher runs a command and passes its exit code on."""
    return runs_true((str(path), "-", "-", "-"))


def runs_true(prefix: Sequence[str]) -> bool:
    """Whether a limits prefix (the launcher's, `prlimit`'s) runs `true` in front of it and
    passes its exit code on: how each is tried, once, before use."""
    true = shutil.which("true")
    if true is None:
        return False
    try:
        probe = subprocess.run([*prefix, true], capture_output=True, check=False, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0
