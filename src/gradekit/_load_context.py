"""What is being loaded right now: the suite file's folder and the case and turn at hand.

The suite loader sets both while it creates graders; the `code` kind reads them so that a
`graders.py` beside the suite file can be imported and its errors name the case and turn. A
plain Python caller may set them too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

__all__ = ["current_place", "current_suite_dir", "place", "suite_dir"]

_SUITE_DIR: ContextVar[Path | None] = ContextVar("gradekit_suite_dir", default=None)
_PLACE: ContextVar[str | None] = ContextVar("gradekit_place", default=None)


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


def current_place() -> str | None:
    """Where in the suite the grader being created sits (`case 'growth', turn 1`), or None.

    Kinds whose errors come from user code (the `code` kind) name it in their messages, so the
    user sees which case's grader failed, not only its position in the file."""
    return _PLACE.get()


@contextlib.contextmanager
def place(case: str | None, turn: int | None = None) -> Iterator[None]:
    """Make `case` (and `turn`) the current place for the duration of the block."""
    text = None if case is None else f"case '{case}'" + ("" if turn is None else f", turn {turn}")
    token = _PLACE.set(text)
    try:
        yield
    finally:
        _PLACE.reset(token)
