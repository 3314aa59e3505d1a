"""The files a run is read back from (`--resume`, `--baseline`, `--rerun-failed`, `compare`):
opened only when they are regular files, read in bounded memory.

A FIFO would block the open (or the read) until a writer came, a device such as /dev/zero
never ends, a folder is no file: each is refused naming the path and what it is, before a
byte is read. A case (a line of a results log, an item of a JSON report) longer than
`MAX_CASE_BYTES` is refused too, so a file of one endless line costs that much memory at
most, not the file's size.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

from gradekit._errors import ConfigError
from gradekit.report.target import kind_of

__all__ = ["MAX_CASE_BYTES", "open_regular", "too_long"]

MAX_CASE_BYTES: Final = 64 << 20
"""The longest case read back (its JSON text), in bytes: 64 MiB. gradekit writes a case's
texts cut at `--max-text` (4 KiB by default), so a real case is far shorter."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` open for reading in binary, when it is a regular file (or a symlink to one);
    ConfigError naming it otherwise (missing, unreadable, a FIFO, a device, a folder)."""
    shown = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise ConfigError(
            f"cannot read {shown}: {error.strerror or error}; check the path"
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(
                f"cannot read {shown}: it is {kind_of(mode)}, not a file; give the path of a "
                "JSON report or a results log"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def too_long(path: Path, line: int) -> ConfigError:
    """The error of a case longer than `MAX_CASE_BYTES` at `line` of `path`."""
    return ConfigError(
        f"{path}:{line}: a case longer than {MAX_CASE_BYTES >> 20} MiB; this file is not a "
        "gradekit report or results log (or was damaged): give another file"
    )
