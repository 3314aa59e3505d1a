"""Running one query on a SQLite database that the query cannot change.

Three locks, each for what the one before does not cover: the file is opened with the URI flag
`mode=ro` (SQLite refuses every write to it), `PRAGMA query_only` refuses writes on the
connection (temporary tables included), and an authorizer refuses ATTACH and DETACH, which
`mode=ro` lets through and which would open, or create, other files. A progress handler
interrupts a query that runs past its deadline. Every grade opens its own connection and runs
one statement per query, so nothing a query does outlives it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import attrs
from gradekit import GradekitError

__all__ = ["QueryError", "Rows", "read_only", "run_query"]

# The progress handler runs every this many SQLite virtual machine instructions: often enough
# to stop within milliseconds, rarely enough to cost nothing measurable.
_PROGRESS_STEPS: Final = 1000

# Pragmas that would lift a lock if a query could set them (defence in depth: one statement
# per fresh connection could not use the lifted lock anyway).
_LOCKING_PRAGMAS: Final = frozenset({"query_only", "writable_schema", "trusted_schema"})


class QueryError(GradekitError):
    """A query could not run to its end: `message` says why, `reason` is one of `error`,
    `timeout`, `too_many_rows`, `no_result`, `denied`."""

    def __init__(self, message: str, reason: str) -> None:
        self.message = message
        self.reason = reason
        super().__init__(message)


@attrs.frozen
class Rows:
    """What a query returned: its number of columns and its rows."""

    columns: int
    rows: list[tuple[Any, ...]]


def _decode(data: bytes) -> str:
    # Text that is not UTF-8 is shown with replacement characters instead of failing the query.
    return data.decode("utf-8", "replace")


@attrs.define
class _Guard:
    """The authorizer and progress handler of one connection, and what they stopped."""

    deadline: float = float("inf")
    denied: str | None = None

    def authorize(self, action: int, first: str | None, second: str | None, *_: Any) -> int:
        if action == sqlite3.SQLITE_ATTACH:
            self.denied = f"ATTACH {first!r}"
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_DETACH:
            self.denied = f"DETACH {first!r}"
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and first in _LOCKING_PRAGMAS and second is not None:
            self.denied = f"PRAGMA {first} = {second}"
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def past_deadline(self) -> bool:
        return time.monotonic() > self.deadline


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[tuple[sqlite3.Connection, _Guard]]:
    """A connection to the SQLite file at `path` that cannot change it, and its guard.

    Raises sqlite3.Error when the file cannot be opened.
    """
    uri = path.resolve().as_uri() + "?mode=ro"
    connection = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        connection.text_factory = _decode
        connection.execute("PRAGMA query_only = ON")
        # Read the schema now: a file that is not a database fails here, not as a query.
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        guard = _Guard()
        connection.set_authorizer(guard.authorize)
        connection.set_progress_handler(guard.past_deadline, _PROGRESS_STEPS)
        yield connection, guard
    finally:
        connection.close()


def run_query(
    connection: sqlite3.Connection, guard: _Guard, sql: str, *, deadline: float, max_rows: int
) -> Rows:
    """Run one SQL statement and fetch its rows, or raise QueryError saying why not."""
    guard.deadline = deadline
    guard.denied = None
    try:
        cursor = connection.execute(sql)
        if cursor.description is None:
            raise QueryError("the statement returns no result set; give a query", "no_result")
        columns = len(cursor.description)
        rows = cursor.fetchmany(max_rows + 1)
    # sqlite3.Warning: "one statement at a time" before Python 3.11; ValueError: a NUL in the
    # text; OverflowError: a number too large for SQLite.
    except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError) as error:
        if guard.denied is not None:
            raise QueryError(
                f"{guard.denied} is not allowed: the database is opened read-only and a query "
                "may not open other files or lift that lock",
                "denied",
            ) from error
        if guard.past_deadline():
            raise QueryError("did not finish in time", "timeout") from error
        raise QueryError(str(error) or type(error).__name__, "error") from error
    finally:
        guard.deadline = float("inf")
    if len(rows) > max_rows:
        raise QueryError(f"returned more than {max_rows} rows (max_rows)", "too_many_rows")
    return Rows(columns, [tuple(row) for row in rows])
