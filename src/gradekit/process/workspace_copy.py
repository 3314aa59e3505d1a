"""The workspace copy a command runs in: sparse files stay sparse, and the copy is bounded.

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
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from gradekit.core.errors import SandboxError

__all__ = ["DEFAULT_MAX_FILES", "DEFAULT_MAX_SIZE", "copy_workspace", "shown_size"]

DEFAULT_MAX_SIZE: Final = 1 << 30
"""Bytes of file data a workspace copy may hold (`max_workspace_size`)."""

DEFAULT_MAX_FILES: Final = 200_000
"""Entries (files, folders, links) a workspace copy may hold (`max_workspace_files`)."""

_CHUNK: Final = 1 << 20
_SEEK_DATA: Final = getattr(os, "SEEK_DATA", None)
_SEEK_HOLE: Final = getattr(os, "SEEK_HOLE", None)
_COPY_FILE_RANGE: Final = getattr(os, "copy_file_range", None)  # Linux only
_OPEN: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


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
