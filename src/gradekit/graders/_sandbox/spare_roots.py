"""Scratch roots that a command left as it found them, kept for the next grade.

A grade without a workspace gets a scratch root of three empty folders (`home`, `tmp`,
`work`). Making one and removing it costs four `mkdir`s and four `rmdir`s, metadata writes
that an ext4 disk journals: about 1 ms a command (bench/program_parts.py), against a few
microseconds to check that a root is still as it was made. So a root whose command left it
exactly so (the three folders, each empty, with the modes and owner they were made with, and
nothing else) is handed to the next grade instead of being removed; any other root is removed
as before. Nothing a command did can reach a later grade: whatever it wrote makes its root
unfit, and its process group (with bubblewrap, its whole PID namespace) is dead before the
root comes back.

At most `SPARE_LIMIT` roots are kept; they are removed when gradekit exits (a process killed
first leaves them to the sweep of stale scratch items, `gradekit._scratch.sweep`). A forked
child forgets its parent's roots: they are the parent's to use and remove.
"""

from __future__ import annotations

import atexit
import os
import stat
import threading
from pathlib import Path
from typing import Final

from gradekit._scratch import remove_tree

__all__ = ["LAYOUT", "SPARE_LIMIT", "Made", "give_back", "made", "take"]

LAYOUT: Final = ("home", "tmp", "work")
"""The folders of a scratch root without a workspace, in it."""

SPARE_LIMIT: Final = 16
"""Roots kept at most (one per grade running at once is all a run reuses)."""

Made = tuple[Path, tuple[int, ...]]
"""A root and the `(mode, uid)` of it and of each folder of LAYOUT, as they were made."""

_lock = threading.Lock()
_spare: list[Made] = []


def _state(path: Path) -> tuple[int, int] | None:
    """(mode, uid) of a real folder (not a link), or None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_mode, info.st_uid) if stat.S_ISDIR(info.st_mode) else None


def made(root: Path) -> Made:
    """What `root`, just made with its LAYOUT folders, looks like now: what `give_back`
    expects to find again."""
    states = [_state(root), *(_state(root / name) for name in LAYOUT)]
    return root, tuple(value for state in states if state is not None for value in state)


def _as_made(entry: Made) -> bool:
    root, expected = entry
    try:
        if sorted(os.listdir(root)) != sorted(LAYOUT):
            return False
        if any(os.listdir(root / name) for name in LAYOUT):
            return False
    except OSError:
        return False
    return made(root)[1] == expected


def take() -> Made | None:
    """A spare root to use (its LAYOUT folders empty), or None when there is none."""
    with _lock:
        return _spare.pop() if _spare else None


def give_back(entry: Made) -> bool:
    """Keep the root for a later grade when it is as it was made (True); else leave it to the
    caller to remove (False)."""
    if not _as_made(entry):
        return False
    with _lock:
        if len(_spare) >= SPARE_LIMIT:
            return False
        _spare.append(entry)
    return True


def _forget() -> None:  # in a forked child: the roots are the parent's
    global _lock  # noqa: PLW0603 - a lock held by another thread at the fork stays held
    _lock = threading.Lock()
    _spare.clear()


@atexit.register
def _remove_spares() -> None:
    with _lock:
        roots = [root for root, _ in _spare]
        _spare.clear()
    for root in roots:
        remove_tree(root)


os.register_at_fork(after_in_child=_forget)
