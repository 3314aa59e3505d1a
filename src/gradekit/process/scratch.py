"""The scratch root of one command: a copy of the workspace, a fresh home and temp folder, and
the scrubbed environment the command gets; all removed when the grade ends (`Sandbox`). Owns
the folders a command runs in: the root, its removal off the grade's path, the spare roots,
and the bounded, sparse-aware copy of the workspace (`copy_workspace`).

Removed off the grade's path: removing a scratch root costs several `rmdir`s that a busy disk
makes slow (bench/RESULTS.md, "`program` graders by jobs"), time a grade need not
wait for: the command has ended and its process group is dead, so nothing writes there any
more. `remove_later` queues the root; one background thread removes roots in order; at
interpreter exit what is still queued is removed before the process ends. A process killed
first leaves its roots to the sweep of stale scratch items (`gradekit.core.scratch.sweep`).

Spare roots: a grade without a workspace gets a scratch root of three empty folders (`home`,
`tmp`, `work`). Making one and removing it costs four `mkdir`s and four `rmdir`s, metadata
writes that an ext4 disk journals, a large part of a short command's cost (bench/RESULTS.md,
"Part by part", from bench/program_parts.py), against a few `lstat` and `listdir` calls to
check that a root is untouched. So a root whose command left it
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

The workspace copy a command runs in (`copy_workspace`): sparse files stay sparse, and the
copy is bounded.

`shutil.copytree` wrote every byte a file claims: a 1 GB sparse file (no disk of its own)
took 1 GB of the scratch disk for each grade. Here each regular file's data is found with
`SEEK_DATA` / `SEEK_HOLE` and only the data is written (`os.copy_file_range`, else reads and
writes); holes stay holes, the file keeps its size. What is written counts against a bound of
bytes (`max_workspace_size`) and one of entries (`max_workspace_files`); a workspace past
either is refused before the byte or the entry past it is written, with a `SandboxError`
naming the option.

Links are copied as links (never followed out of the workspace); hard links inside the
workspace stay hard links in the copy (their data written and counted once). FIFOs, sockets
and devices are left out of the copy: opening a FIFO blocks until a writer comes, and a
device such as /dev/zero never ends. Files are opened with `O_NOFOLLOW | O_NONBLOCK` and
checked again once open, so one swapped for a link or a FIFO while copying is refused, not
followed nor waited on.

Imports: the core (`gradekit.core.scratch`: scratch names and `remove_tree`;
`gradekit.core.errors`).
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

from gradekit.core.errors import SandboxError
from gradekit.core.scratch import remove_tree, scratch_prefix

__all__ = [
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_SIZE",
    "HOME",
    "LAYOUT",
    "PASSED_THROUGH",
    "SPARE_LIMIT",
    "TMP",
    "WORK",
    "Made",
    "Sandbox",
    "copy_workspace",
    "drain",
    "give_back_spare",
    "made_spare",
    "remove_later",
    "shown_size",
    "take_spare",
]


DEFAULT_MAX_SIZE: Final = 1 << 30
"""Bytes of file data a workspace copy may hold (`max_workspace_size`)."""

DEFAULT_MAX_FILES: Final = 200_000
"""Entries (files, folders, links) a workspace copy may hold (`max_workspace_files`)."""

_CHUNK: Final = 1 << 20
_SEEK_DATA: Final = getattr(os, "SEEK_DATA", None)
_SEEK_HOLE: Final = getattr(os, "SEEK_HOLE", None)
_COPY_FILE_RANGE: Final = getattr(os, "copy_file_range", None)  # Linux only
_OPEN: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


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


def shown_size(size: int) -> str:
    """`size` in bytes as people read it: `1 GiB`, `512 MiB`, `1.5 KiB`, `100 bytes`."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.4g} {unit}"
    return f"{size} bytes"


class _Budget:
    """What the copy has written so far, against its bounds."""

    __slots__ = ("bytes", "entries", "max_entries", "max_size", "source")

    def __init__(self, source: Path, max_size: int, max_entries: int) -> None:
        self.source = source
        self.max_size = max_size
        self.max_entries = max_entries
        self.bytes = 0
        self.entries = 0

    def entry(self, path: str) -> None:
        self.entries += 1
        if self.entries > self.max_entries:
            raise SandboxError(
                f"the workspace '{self.source}' holds more than {self.max_entries:,} files, "
                f"folders and links (max_workspace_files: {self.max_entries}; the copy stopped "
                f"at {self._relative(path)}); raise max_workspace_files, or leave out what "
                "the command does not need"
            )

    def data(self, path: str, size: int) -> None:
        self.bytes += size
        if self.bytes > self.max_size:
            raise SandboxError(
                f"the workspace '{self.source}' holds more than "
                f"{shown_size(self.max_size)} of file data (max_workspace_size: "
                f"{self.max_size}; with {self._relative(path)} it would hold at least "
                f"{shown_size(self.bytes)}); raise max_workspace_size, or leave out what the "
                "command does not need"
            )

    def _relative(self, path: str) -> str:
        return os.path.relpath(path, self.source)


def copy_workspace(
    source: str | os.PathLike[str],
    target: Path,
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    max_files: int = DEFAULT_MAX_FILES,
) -> None:
    """Copy the folder `source` to `target` (which must not exist), sparse-aware and within
    `max_size` bytes of file data and `max_files` entries; past either, a `SandboxError`
    naming the option (what was copied until then is the caller's to remove)."""
    root = Path(source)
    budget = _Budget(root, max_size, max_files)
    linked: dict[tuple[int, int], str] = {}
    os.mkdir(target, 0o700)
    folders: list[tuple[str, os.stat_result]] = [(str(target), os.stat(root))]
    # Folders one after the other (not recursion: a workspace may nest them thousands deep).
    pending = [(str(root), str(target))]
    while pending:
        source_folder, target_folder = pending.pop()
        with os.scandir(source_folder) as entries:  # read as copied: never all at once
            for entry in entries:
                here, there = entry.path, os.path.join(target_folder, entry.name)
                info = entry.stat(follow_symlinks=False)
                mode = info.st_mode
                if stat.S_ISDIR(mode):
                    budget.entry(here)
                    os.mkdir(there, 0o700)
                    folders.append((there, info))
                    pending.append((here, there))
                elif stat.S_ISLNK(mode):
                    budget.entry(here)
                    os.symlink(os.readlink(here), there)
                    os.utime(there, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
                elif stat.S_ISREG(mode):
                    budget.entry(here)
                    key = (info.st_dev, info.st_ino)
                    first = linked.get(key) if info.st_nlink > 1 else None
                    if first is not None:
                        os.link(first, there)
                        continue
                    _copy_file(here, there, budget)
                    if info.st_nlink > 1:
                        linked[key] = there
                # FIFOs, sockets and devices: left out (see the module).
    # Modes and times of folders last: a read-only folder is filled before it is made so.
    for path, info in reversed(folders):
        os.chmod(path, stat.S_IMODE(info.st_mode))
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def _copy_file(source: str, target: str, budget: _Budget) -> None:
    fd = os.open(source, _OPEN)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped since it was listed
            raise SandboxError(
                f"'{source}' changed while the workspace was copied; grade a workspace "
                "nothing writes to"
            )
        size = info.st_size
        extents = _extents(fd, size)
        budget.data(source, sum(end - start for start, end in extents))
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            for start, end in extents:
                _copy_range(fd, out, start, end)
            os.ftruncate(out, size)  # a hole at the end: the size, without the bytes
            os.fchmod(out, stat.S_IMODE(info.st_mode))
            os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _extents(fd: int, size: int) -> list[tuple[int, int]]:
    """The `(start, end)` ranges of the file that hold data; the whole file where the file
    system cannot say."""
    if _SEEK_DATA is None or _SEEK_HOLE is None:
        return [(0, size)] if size else []
    extents: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, _SEEK_DATA)
        except OSError as error:
            if error.errno == errno.ENXIO:  # only a hole from here to the end
                break
            return [(0, size)] if size else []  # SEEK_DATA not supported
        if start >= size:
            break
        end = min(os.lseek(fd, start, _SEEK_HOLE), size)
        extents.append((start, end))
        offset = end
    return extents


def _copy_range(source: int, target: int, start: int, end: int) -> None:
    offset = start
    while offset < end:
        count = min(end - offset, _CHUNK * 64)
        try:
            if _COPY_FILE_RANGE is None:
                raise OSError(errno.ENOSYS, "no copy_file_range here")
            copied = _COPY_FILE_RANGE(source, target, count, offset, offset)
        except OSError as error:
            if error.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise
            copied = _copy_slowly(source, target, offset, min(end, offset + count))
        if copied == 0:  # the file shrank while copied: what is left reads as a hole
            return
        offset += copied


def _copy_slowly(source: int, target: int, start: int, end: int) -> int:
    offset = start
    while offset < end:
        data = os.pread(source, min(_CHUNK, end - offset), offset)
        if not data:
            break
        written = 0
        while written < len(data):
            written += os.pwrite(target, data[written:], offset + written)
        offset += len(data)
    return offset - start
