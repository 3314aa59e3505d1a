"""Process isolation in bubblewrap: one grade in a fresh Python inside a sandbox.

The runner's warm workers (`gradekit.run.workers`) use this module's view of the files
(`_visible`, `_working_folder`); `grade_in_jail`, a fresh sandbox per grade, is the former
path, kept for `bench/isolation.py` to compare against.

The parent starts `bwrap ... python -c "...child(FD)"` with one end of a socket pair as file
descriptor FD, sends the grade over it (the same payload as the forkserver child gets) and
waits for the result; at the timeout, or when the result is in, it kills bubblewrap, and with
it every process of the sandbox's PID namespace.

The child sees (see `gradekit.process.bubblewrap` for the layout): the system read-only; gradekit's
Python, every folder on its `sys.path`, the folders of the modules it has loaded, the suite's
folder and the sample's workspace, read-only; an empty private `/tmp` (its TMPDIR); no home
folder. It keeps gradekit's environment (a model-graded judge needs its API key) and network.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterable
from multiprocessing.connection import Connection
from typing import Final

from gradekit._types import GradeResult, Sample, error_text
from gradekit.process import bubblewrap as _bwrap
from gradekit.process import bubblewrap as _sandbox_mode
from gradekit.registry.entries import GraderEntry
from gradekit.run.isolation import _death, _paths, _payload
from gradekit.run.results import timeout_result
from gradekit.run.settings import Settings

__all__ = ["grade_in_jail", "start_in_jail"]

_REAP_SECONDS: Final = 5.0
_SIGNALLED: Final = 128  # bubblewrap exits with 128 + N when its command dies of signal N


def grade_in_jail(
    entry: GraderEntry, sample: Sample, seconds: float, settings: Settings
) -> GradeResult:
    """Grade `sample` with `entry` in a Python child inside bubblewrap; kill it after
    `seconds`. Blocks the calling (worker) thread until the child answers, dies or is killed."""
    paths = _paths(settings)
    try:
        connection, process = start_in_jail(
            "gradekit.run.jailed_child", _visible(paths, sample), _working_folder(paths)
        )
    except OSError as error:
        text = f"{error_text(error)} (starting bubblewrap for grader '{entry.name}')"
        return GradeResult.of_error(entry.kind, entry.name, text)
    try:
        try:
            connection.send((_payload(entry), sample, settings.memory_limit_mb, paths))
            if not connection.poll(seconds):
                return timeout_result(entry, seconds)
            value: GradeResult = connection.recv()
        except (EOFError, OSError):
            return GradeResult.of_error(entry.kind, entry.name, _death(entry, _exit(process)))
        return value
    finally:
        connection.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def start_in_jail(
    module: str, readonly: Iterable[str], cwd: str | None
) -> tuple[Connection, subprocess.Popen[bytes]]:
    """A fresh Python inside bubblewrap running `module.main(FD)`, FD the child's end of a
    socket pair, and a Connection on the parent's end. The sandbox sees `readonly` (and the
    system) read-only and starts in `cwd`; the child keeps gradekit's environment, with an
    empty private TMPDIR. Raises what starting bubblewrap raises, leaving no socket open."""
    ours, theirs = socket.socketpair()
    fd = theirs.fileno()
    env = {**os.environ, "TMPDIR": "/tmp", _sandbox_mode.INSIDE: "1"}
    bwrap = _sandbox_mode.bwrap_executable()
    try:
        with _bwrap.jail(bwrap, readonly=readonly, network=True, cwd=cwd) as box:
            process = subprocess.Popen(
                [*box.argv, sys.executable, "-c", f"from {module} import main; main({fd})"],
                stdin=subprocess.DEVNULL,
                pass_fds=(fd, *box.fds),
                start_new_session=True,
                env=env,
            )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return Connection(ours.detach()), process


def _exit(process: subprocess.Popen[bytes]) -> int | None:
    """The child's exit code, negative for a signal as multiprocessing reports it."""
    try:
        code = process.wait(_REAP_SECONDS)
    except subprocess.TimeoutExpired:
        return None
    return -(code - _SIGNALLED) if code > _SIGNALLED else code


def _visible(paths: Iterable[str], sample: Sample) -> list[str]:
    """What the child must read: its Python, its import paths, where its modules came from,
    and the sample's workspace."""
    folders = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    folders += [os.path.abspath(path or os.curdir) for path in paths]
    folders += _module_folders()
    if sample.workspace is not None:
        folders.append(os.path.abspath(sample.workspace))
    return folders


def _module_folders() -> list[str]:
    """The folders loaded modules were imported from (editable installs live outside
    sys.path), computed again only when modules were loaded since."""
    global _known  # noqa: PLW0603 - a cache of the last answer
    count = len(sys.modules)
    if _known[0] != count:
        _known = (count, _import_roots())
    return _known[1]


_known: tuple[int, list[str]] = (-1, [])


def _import_roots() -> list[str]:
    found = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        name = getattr(module, "__name__", "")
        if not isinstance(file, str) or not os.path.isabs(file):
            continue
        folder = os.path.dirname(file)
        for _ in range(name.count(".") + (file.endswith("__init__.py"))):
            folder = os.path.dirname(folder)
        found.add(folder)
    return sorted(found)


def _working_folder(paths: Iterable[str]) -> str:
    """gradekit's working folder when the child can see it (on its import path), else /."""
    here = os.getcwd()
    visible = {os.path.abspath(path or os.curdir) for path in paths}
    return here if here in visible and here not in _bwrap.homes() else "/"
