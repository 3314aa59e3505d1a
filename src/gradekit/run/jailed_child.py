"""The main of a process-isolated grade's child inside bubblewrap (see `gradekit.run.jailed`).

Kept apart so that the child imports only what grading needs, not the parent's machinery.
"""

from __future__ import annotations

from multiprocessing.connection import Connection

from gradekit.run.isolation import _child_main

__all__ = ["main"]


def main(fd: int) -> None:  # pragma: no cover - runs in the sandbox
    """Receive the grade on the connection `fd`, grade it, send the result back."""
    connection = Connection(fd)
    payload, sample, memory_limit_mb, paths = connection.recv()
    _child_main(connection, payload, sample, memory_limit_mb, paths)
