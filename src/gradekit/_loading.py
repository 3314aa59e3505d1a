"""What is being loaded right now: the suite file's folder, for kinds that import user code.

The suite loader sets it while it creates graders; the `code` kind reads it so that a
`graders.py` beside the suite file can be imported. A plain Python caller may set it too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

__all__ = ["current_suite_dir", "suite_dir"]

_SUITE_DIR: ContextVar[Path | None] = ContextVar("gradekit_suite_dir", default=None)


def current_suite_dir() -> Path | None:
    """The folder of the suite file being loaded, or None outside a load."""
    return _SUITE_DIR.get()


@contextlib.contextmanager
def suite_dir(path: Path | str | None) -> Iterator[None]:
    """Make `path` the current suite folder for the duration of the block."""
    token = _SUITE_DIR.set(None if path is None else Path(path).resolve())
    try:
        yield
    finally:
        _SUITE_DIR.reset(token)
