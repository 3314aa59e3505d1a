"""Names made safe for a terminal or a CI log, kept apart so the tables need nothing else."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["escaped"]

_CONTROL_OR_C1: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return repr(match[0])[1:-1]  # `\x1b`, `\n`, `\x00`


def escaped(name: str) -> str:
    """A name for a terminal or a CI log: as written, but each control character (ESC, NUL,
    a newline) as its escape (`\\x1b`), so a name can neither drive the terminal (`\\x1b[2J`
    clears it) nor split a line of a table or a list."""
    return _CONTROL_OR_C1.sub(_escape, name) if _CONTROL_OR_C1.search(name) else name
