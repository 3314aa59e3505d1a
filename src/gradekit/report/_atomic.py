"""Write a file atomically: readers see the old file or the whole new one, never a part."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TextIO

from gradekit._errors import WriteError
from gradekit._scratch import sweep
from gradekit._utf8 import REPLACE_SURROGATES
from gradekit.report.target import creation_error, make_folder, target, temp_prefix

__all__ = ["atomic_text"]


@contextlib.contextmanager
def atomic_text(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Yield a text file that replaces `path` when the block ends without an error.

    The temporary file sits in the same folder (so the final rename never crosses file
    systems), is fsynced, then renamed over `path`. A symlink is written through: its target
    is replaced, the link stays. A device, FIFO, socket or folder at `path` is never replaced
    (WriteError). On an error the temporary file is removed and `path` is left as it was;
    a write that fails (a full disk) raises WriteError naming the path and the cause. Missing
    parent folders are created. Temporary files that killed runs left in the folder are
    removed first.
    """
    final = target(path)
    make_folder(path, final)
    sweep(final.parent)
    try:
        fd, temp = tempfile.mkstemp(prefix=temp_prefix(final), suffix=".tmp", dir=final.parent)
    except OSError as error:
        raise creation_error(path, final.parent, error) from error
    try:
        text = os.fdopen(fd, "w", encoding="utf-8", errors=REPLACE_SURROGATES, newline="\n")
        with text as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        # mkstemp creates the file 0600; a report is an ordinary file for its reader.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)
        os.replace(temp, final)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(error, WriteError):
            raise
        raise WriteError(str(path), error.strerror or str(error), _hint(error)) from error
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _hint(error: OSError) -> str:
    import errno

    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free some space on that disk, or choose another path"
    return "check the path"
