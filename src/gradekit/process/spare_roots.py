"""Scratch roots that a command left as it found them, kept for the next grade.

A grade without a workspace gets a scratch root of three empty folders (`home`, `tmp`,
`work`). Making one and removing it costs four `mkdir`s and four `rmdir`s, metadata writes
that an ext4 disk journals: about 1 ms a command (bench/program_parts.py), against some tens
of microseconds to check that a root is untouched. So a root whose command left it exactly as
it was made is handed to the next grade instead of being removed; any other root is removed
as before. Untouched means, for the root and each of its three folders: the same inode, mode,
owner, group, modification and change times (a change time moves with every chmod, chown,
extended attribute or ACL, and cannot be set back), no extended attribute at all, and no entry
but the three folders, each empty. The check runs when the root comes back and again when it
is taken, so what wrote there in between is caught too.

What this cannot see: a process that outlived its grade and writes into the folders while a
later grade runs. With bubblewrap none can (its PID namespace ends with the grade); with
`sandbox: none`, a process that left the grade's process group survives it, and such a
process can write anywhere the gradekit user can anyway (see docs/agent-graders.md).

At most `SPARE_LIMIT` roots are kept; they are removed when gradekit exits (a process killed
first leaves them to the sweep of stale scratch items, `gradekit._scratch.sweep`). A forked
child forgets its parent's roots: they are the parent's to use and remove.
"""

from __future__ import annotations

import atexit
import errno
import os
import stat
import threading
from pathlib import Path
from typing import Final, NamedTuple

from gradekit._scratch import remove_tree
from gradekit.process.remover import remove_later

__all__ = ["HOME", "LAYOUT", "SPARE_LIMIT", "TMP", "WORK", "Made", "give_back", "made", "take"]

HOME: Final = "home"
"""The command's home folder, in its scratch root."""

TMP: Final = "tmp"
"""The command's temp folder, in its scratch root."""

WORK: Final = "work"
"""The command's working folder (the workspace copy, when there is one), in its scratch root."""

LAYOUT: Final = (HOME, TMP, WORK)
"""The folders of a scratch root without a workspace, in it: what `Sandbox` makes."""

SPARE_LIMIT: Final = 16
"""Roots kept at most (one per grade running at once is all a run reuses)."""

_SORTED_LAYOUT: Final = sorted(LAYOUT)


class Made(NamedTuple):
    """A root as it was made: the root, the paths of it and of each folder of LAYOUT as texts
    (joined once: a check reads them again and again), and the state (`_state`) of each."""

    root: Path
    paths: tuple[str, ...]
    state: tuple[int, ...]


_lock = threading.Lock()
_spare: list[Made] = []


def _state(path: str) -> tuple[int, ...] | None:
    """What a change to a real folder (not a link) would move: its inode, mode, owner,
    group, modification and change times; None for anything else or a folder with extended
    attributes (ACLs among them)."""
    try:
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode) or _attributes(path):
            return None
    except OSError:
        return None
    return (
        info.st_ino,
        info.st_mode,
        info.st_uid,
        info.st_gid,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _attributes(path: str) -> list[str]:
    """The folder's extended attribute names (none where the file system keeps none)."""
    try:
        return os.listxattr(path, follow_symlinks=False)
    except OSError as error:
        if error.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return []
        raise


def made(root: Path) -> Made:
    """What `root`, just made with its LAYOUT folders, looks like now: what `give_back`
    expects to find again."""
    text = str(root)
    paths = (text, *(os.path.join(text, name) for name in LAYOUT))
    return Made(root, paths, _states(paths))


def _states(paths: tuple[str, ...]) -> tuple[int, ...]:
    """The states of `paths`, one after the other; () when one is unfit (never matches)."""
    values: list[int] = []
    for path in paths:
        state = _state(path)
        if state is None:
            return ()
        values.extend(state)
    return tuple(values)


def _as_made(entry: Made) -> bool:
    root, *folders = entry.paths
    try:
        if sorted(os.listdir(root)) != _SORTED_LAYOUT:
            return False
        if any(os.listdir(folder) for folder in folders):
            return False
    except OSError:
        return False
    return bool(entry.state) and _states(entry.paths) == entry.state


def take() -> Made | None:
    """A spare root to use, untouched since it was made, or None when there is none (a spare
    root found touched since it came back is removed)."""
    while True:
        with _lock:
            if not _spare:
                return None
            entry = _spare.pop()
        if _as_made(entry):
            return entry
        remove_later(entry.root)  # off the grade's path, as any other used root


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
        roots = [entry.root for entry in _spare]
        _spare.clear()
    for root in roots:
        remove_tree(root)


os.register_at_fork(after_in_child=_forget)
