"""The scratch root of one command: a copy of the workspace, a fresh home and temp folder, and
the scrubbed environment the command gets; all removed when the grade ends (`Sandbox`).

Removed off the grade's path: removing a scratch root costs several `rmdir`s that a busy disk
makes slow (about 10 ms a grade measured on a shared 2-core machine), time a grade need not
wait for: the command has ended and its process group is dead, so nothing writes there any
more. `remove_later` queues the root; one background thread removes roots in order; at
interpreter exit what is still queued is removed before the process ends. A process killed
first leaves its roots to the sweep of stale scratch items (`gradekit.core.scratch.sweep`).

Spare roots: a grade without a workspace gets a scratch root of three empty folders (`home`,
`tmp`, `work`). Making one and removing it costs four `mkdir`s and four `rmdir`s, metadata
writes that an ext4 disk journals: about 1 ms a command (bench/program_parts.py), against some
tens of microseconds to check that a root is untouched. So a root whose command left it
exactly as it was made is handed to the next grade instead of being removed; any other root
is removed as before. Untouched means, for the root and each of its three folders: the same
inode, mode, owner, group, modification and change times (a change time moves with every
chmod, chown, extended attribute or ACL, and cannot be set back), no extended attribute at
all, and no entry but the three folders, each empty. The check runs when the root comes back
and again when it is taken, so what wrote there in between is caught too.

What this cannot see: a process that outlived its grade and writes into the folders while a
later grade runs. With bubblewrap none can (its PID namespace ends with the grade); with
`sandbox: none`, a process that left the grade's process group survives it, and such a
process can write anywhere the gradekit user can anyway (see docs/agent-graders.md).

At most `SPARE_LIMIT` roots are kept; they are removed when gradekit exits (a process killed
first leaves them to the sweep of stale scratch items). A forked child forgets its parent's
roots: they are the parent's to use and remove.

Imports: the core (`gradekit.core.scratch`: scratch names and `remove_tree`) and
`workspace_copy`.
"""

from __future__ import annotations

import atexit
import errno
import os
import queue
import stat
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Final, NamedTuple

from gradekit.core.scratch import remove_tree, scratch_prefix
from gradekit.process.workspace_copy import DEFAULT_MAX_FILES, DEFAULT_MAX_SIZE, copy_workspace

__all__ = [
    "HOME",
    "LAYOUT",
    "PASSED_THROUGH",
    "SPARE_LIMIT",
    "TMP",
    "WORK",
    "Made",
    "Sandbox",
    "drain",
    "give_back_spare",
    "made_spare",
    "remove_later",
    "take_spare",
]


PASSED_THROUGH: Final = ("PATH", "LANG")
"""The only variables of gradekit's environment a command inherits (besides what it declares)."""


class Sandbox:
    """A scratch root for one grade: `cwd` (the workspace copy, or the workspace itself),
    a fresh `home` and `tmp`. Use it as a context manager; everything is removed on exit (at
    once, or with `defer` by the remover thread, before gradekit exits). With `reuse` and no
    workspace, the root may be a spare one, its folders as empty as new, and it is kept for
    the next grade when the command left it so (see the module: spare roots)."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        *,
        copy: bool = True,
        defer: bool = False,
        reuse: bool = False,
        max_size: int = DEFAULT_MAX_SIZE,
        max_files: int = DEFAULT_MAX_FILES,
    ) -> None:
        self.defer = defer  # removed on the remover thread (`remove_later`), not at once
        # With `reuse` and no workspace: a spare root left as it was made (`take_spare`).
        self._made: Made | None = None
        spare = take_spare() if reuse and workspace is None else None
        if spare is not None:
            self.root = spare.root
        else:
            self.root = Path(tempfile.mkdtemp(prefix=scratch_prefix("sandbox")))
        self.home = self.root / HOME
        self.tmp = self.root / TMP
        if spare is not None:
            self.cwd = self.root / WORK
            self._made = spare
            return
        self.home.mkdir()
        self.tmp.mkdir()
        try:
            if workspace is None:
                self.cwd = self.root / WORK
                self.cwd.mkdir()
                if reuse:
                    self._made = made_spare(self.root)
            elif copy:
                self.cwd = self.root / WORK
                copy_workspace(workspace, self.cwd, max_size=max_size, max_files=max_files)
            else:
                self.cwd = Path(workspace).resolve()
        except BaseException:
            self.close()
            raise

    def env(self, declared: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The scrubbed environment: PATH and LANG from the parent, HOME and TMPDIR in the
        sandbox, then `declared` (a None value passes that variable through from the parent)."""
        env = {key: os.environ[key] for key in PASSED_THROUGH if key in os.environ}
        env.setdefault("PATH", os.defpath)
        env["HOME"] = str(self.home)
        env["TMPDIR"] = str(self.tmp)
        for key, value in (declared or {}).items():
            if value is None:
                if key in os.environ:
                    env[key] = os.environ[key]
            else:
                env[key] = value
        return env

    def close(self) -> None:
        """Remove the scratch root, including read-only files a tool left behind (with
        `defer`, soon, on the remover thread: a grade need not wait for it); with `reuse`, a
        root left as it was made is kept for the next grade instead."""
        if self._made is not None and give_back_spare(self._made):
            return
        if self.defer:
            remove_later(self.root)
        else:
            remove_tree(self.root)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- removing roots off the grade's path -------------------------------------------------------

_queue: queue.SimpleQueue[Path | None] = queue.SimpleQueue()
_remover_lock = threading.Lock()
_thread: threading.Thread | None = None
_pending = 0
_idle = threading.Condition(_remover_lock)


def remove_later(root: Path) -> None:
    """Remove `root` (a scratch tree) soon, on the remover thread."""
    global _thread, _pending  # noqa: PLW0603 - one remover per process, started on demand
    with _remover_lock:
        _pending += 1
        if _thread is None:
            _thread = threading.Thread(target=_work, name="gradekit-remover", daemon=True)
            _thread.start()
    _queue.put(root)


def drain(timeout: float | None = None) -> bool:
    """Wait until every queued root is removed (True), or `timeout` seconds passed (False)."""
    with _idle:
        return _idle.wait_for(lambda: _pending == 0, timeout)


def _work() -> None:
    global _pending  # noqa: PLW0603
    while True:
        root = _queue.get()
        if root is None:
            return
        try:
            remove_tree(root)
        finally:
            with _idle:
                _pending -= 1
                _idle.notify_all()


@atexit.register
def _at_exit() -> None:
    # The remover is a daemon thread: finish its queue here, or remove what is left directly.
    if not drain(5.0):
        while True:
            try:
                root = _queue.get_nowait()
            except queue.Empty:
                return
            if root is not None:
                remove_tree(root)


# -- spare roots ---------------------------------------------------------------------------------

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


_spare_lock = threading.Lock()
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


def made_spare(root: Path) -> Made:
    """What `root`, just made with its LAYOUT folders, looks like now: what `give_back`
    expects to find again (`give_back_spare`)."""
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


def take_spare() -> Made | None:
    """A spare root to use, untouched since it was made, or None when there is none (a spare
    root found touched since it came back is removed)."""
    while True:
        with _spare_lock:
            if not _spare:
                return None
            entry = _spare.pop()
        if _as_made(entry):
            return entry
        remove_later(entry.root)  # off the grade's path, as any other used root


def give_back_spare(entry: Made) -> bool:
    """Keep the root for a later grade when it is as it was made (True); else leave it to the
    caller to remove (False)."""
    if not _as_made(entry):
        return False
    with _spare_lock:
        if len(_spare) >= SPARE_LIMIT:
            return False
        _spare.append(entry)
    return True


def _forget() -> None:  # in a forked child: the roots are the parent's
    global _spare_lock  # noqa: PLW0603 - a lock held by another thread at the fork stays held
    _spare_lock = threading.Lock()
    _spare.clear()


@atexit.register
def _remove_spares() -> None:
    with _spare_lock:
        roots = [entry.root for entry in _spare]
        _spare.clear()
    for root in roots:
        remove_tree(root)


os.register_at_fork(after_in_child=_forget)
