"""gradekit's launcher of limited commands (`launcher.c`), built once per machine on first use.

The limits of a command must be set between fork and exec, and `subprocess`'s fast `vfork`
path runs no Python there, so a small program in front of the command sets them on itself and
execs the command in the same process. util-linux's `prlimit` does it in about 0.75-1.1 ms
more than the command alone (it loads the locale and links `libsmartcols`); the launcher, a
program of a few lines, in about 0.05 ms built static with musl, 0.6 ms with glibc
(bench/RESULTS.md).

It is built with the C compiler (`$CC`, else `musl-gcc` where it is installed, else `cc`;
`_recipes`) into the user's cache folder (`$XDG_CACHE_HOME/gradekit`, else
`~/.cache/gradekit`), named by a hash of its source and of the compilers at hand, and tried
once per process before use. It is run only from a folder no one else could have changed: the
folder and the file are the user's own and no one else can write to them, and no folder above
it lets anyone else rename what it holds (each is the user's or root's, and others cannot
write to it, unless it is sticky as /tmp is). Where there is no compiler, the build fails, the
folder is not safe or the launcher does not run, `launcher()` is None and
`limits` uses `prlimit`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import platform
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

__all__ = ["launcher", "reset", "runs_true"]

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
    launcher starts in about 0.05 ms, a glibc one, static or linked, in about 0.6 ms: glibc
    reads the processor's features as it starts, slow under a hypervisor (bench/RESULTS.md)."""
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
