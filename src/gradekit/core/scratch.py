"""Scratch files named for the process that owns them, and the sweep that removes those whose
process is gone.

A run that is killed (SIGKILL, a crash, a power cut) cannot clean up after itself: its scratch
results log, its spool of cases, its sandbox folders and the temporary files beside the
reports it was writing stay behind. Each of them carries its owner's pid in its name
(`gradekit-log-4242-k3j9x2ab.jsonl`, `.report.json.gradekit-tmp-4242-k3j9x2ab.tmp`), so the
next gradekit to start removes the ones whose owner no longer runs, and never one whose owner
is alive. (A pid is only meaningful inside its pid namespace: containers that share a temp
folder should not share a pid namespace's numbers.)
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

__all__ = ["owner_alive", "remove_tree", "scratch_prefix", "sweep"]

_NAME: Final = re.compile(
    r"(?:^|\.)gradekit-(log|spool|sandbox|tmp)-(\d+)-[a-z0-9_]+(?:\.jsonl|\.tmp)?$"
)
"""What `scratch_prefix` names look like once `tempfile` has added its random part."""


def scratch_prefix(role: str) -> str:
    """The name prefix of a scratch item of this process: `gradekit-ROLE-PID-` (role: `log`,
    `spool`, `sandbox` or `tmp`), for `tempfile.mkstemp` / `mkdtemp` to complete."""
    return f"gradekit-{role}-{os.getpid()}-"


def owner_alive(pid: int) -> bool:
    """Whether process `pid` runs (on this machine, in this pid namespace)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def sweep(folder: str | os.PathLike[str] | None = None) -> list[str]:
    """Remove the scratch items in `folder` (default: the temp folder) whose owner is gone.

    Returns the names removed. Never raises: a folder that cannot be listed, or an item that
    cannot be removed, is left as it is.
    """
    where = Path(tempfile.gettempdir() if folder is None else folder)
    try:
        names = os.listdir(where)
    except OSError:
        return []
    removed = []
    for name in names:
        match = _NAME.search(name)
        if match is None or owner_alive(int(match.group(2))):
            continue
        path = where / name
        try:
            if path.is_dir() and not path.is_symlink():
                remove_tree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed.append(name)
    return removed


def remove_tree(path: Path) -> None:
    """Remove a folder, including the read-only files and folders a tool left in it."""
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_force)
    else:
        shutil.rmtree(path, onerror=lambda f, p, info: _force(f, p, info[1]))


def _force(function: Callable[..., Any], path: str, error: BaseException) -> None:
    # Build tools (Go's module cache) leave read-only files and folders in a sandbox.
    if isinstance(error, FileNotFoundError):
        return
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
    with contextlib.suppress(OSError):
        function(path)
