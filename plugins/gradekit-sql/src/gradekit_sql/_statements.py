"""Which statements of an SQL text only read, decided on sqlglot's syntax tree.

A statement reads when its root is a query (SELECT, a set operation such as UNION, a
parenthesised query, or VALUES) and nothing inside it writes: no INSERT, UPDATE, DELETE or
MERGE (PostgreSQL allows them in a WITH clause), no DDL, no SELECT ... INTO (which creates a
table), no FOR UPDATE / FOR SHARE (which lock rows), no PRAGMA, ATTACH, transaction or session
statement. A statement sqlglot only keeps as an opaque command (REPLACE INTO, VACUUM, EXPLAIN
in some dialects) is not a query either.

sqlglot is imported on first use.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import TYPE_CHECKING, Any, Final

import attrs

from gradekit_sql._names import Allowed, NotAllowed, not_allowed

if TYPE_CHECKING:
    from sqlglot import exp

__all__ = ["SqlSyntaxError", "Statement", "check_dialect", "statements"]

# sqlglot class names of nodes that write, lock, or change the session; looked up by name
# so that a class missing from an older sqlglot is simply not needed.
_NOT_READS = (
    "DML",  # INSERT, UPDATE, DELETE, MERGE, COPY
    "DDL",  # CREATE (and INSERT)
    "Drop",
    "Alter",
    "TruncateTable",
    "Into",
    "Lock",
    "Command",
    "Pragma",
    "Attach",
    "Detach",
    "Transaction",
    "Commit",
    "Rollback",
    "Set",
    "Use",
    "Analyze",
    "LoadData",
    "Grant",
    "Revoke",
    "Cache",
    "Uncache",
    "Refresh",
    "Kill",
    "Comment",
    "Execute",
)


class SqlSyntaxError(Exception):
    """The text does not parse: `message` says where and why."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@attrs.frozen
class Statement:
    """One statement: its kind (`SELECT`, `DELETE`...), when it does not only read, why, and
    when tables or columns are restricted, those it reads that are not allowed."""

    kind: str
    problem: str | None = None
    not_allowed: NotAllowed | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form listed in details."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "read": self.problem is None,
            "problem": self.problem,
        }
        if self.not_allowed is not None:
            data["not_allowed"] = self.not_allowed.to_dict()
        return data


class _QuietFallback(logging.Filter):
    """Drops sqlglot's warning that it kept a statement as an opaque command: the grader
    reports that statement itself, and the warning would land on the run's stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "contains unsupported syntax" not in record.getMessage()


_IMPORT: Final = threading.Lock()


@functools.cache
def _sqlglot() -> Any:
    # One import at a time: first imports of one package from two threads can deadlock.
    with _IMPORT:
        import sqlglot

    logging.getLogger("sqlglot").addFilter(_QuietFallback())
    return sqlglot


@functools.cache
def _not_reads() -> tuple[type[exp.Expression], ...]:
    from sqlglot import exp

    return tuple(getattr(exp, name) for name in _NOT_READS if hasattr(exp, name))


def check_dialect(dialect: str) -> str | None:
    """None when sqlglot knows `dialect`, else the message saying so."""
    try:
        _sqlglot().Dialect.get_or_raise(dialect)
    except ValueError as error:
        return str(error)
    return None


def _clip(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


def _kind(node: exp.Expression) -> str:
    from sqlglot import exp

    if isinstance(node, exp.Condition):
        return "expression"
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    if isinstance(node, exp.Subquery):
        return "SELECT"
    if isinstance(node, exp.Into):
        return "SELECT ... INTO"
    if isinstance(node, exp.Lock):
        return "FOR UPDATE" if node.args.get("update") else "FOR SHARE"
    return node.key.upper()


def _problem(node: exp.Expression) -> str | None:
    from sqlglot import exp

    if isinstance(node, exp.Command):
        return f"{_kind(node)} is not a query sqlglot can read (kept as an opaque command)"
    if isinstance(node, exp.Condition):
        return f"{_clip(node.sql())!r} is an expression, not a statement"
    if not isinstance(node, (exp.Query, exp.Values)):
        return f"{_kind(node)} is not a query"
    inner = node.find(*_not_reads())
    if inner is None:
        return None
    if isinstance(inner, exp.Into):
        return "SELECT ... INTO creates a table"
    if isinstance(inner, exp.Lock):
        return f"{_kind(inner)} locks rows"
    return f"it contains {_kind(inner)}, which is not a read"


def _syntax_message(error: Exception, dialect: str) -> str:
    found = getattr(error, "errors", None)
    if not found:
        return f"not valid {dialect} SQL: {error}"
    first = found[0]
    near = (first.get("start_context", "") + first.get("highlight", "")).strip()
    where = f" at line {first.get('line')}, column {first.get('col')}"
    return f"not valid {dialect} SQL: {first.get('description')}{where} (near {near!r})"


def statements(sql: str, dialect: str, allowed: Allowed | None = None) -> list[Statement]:
    """Every non-empty statement of `sql` with its kind and problem, and with `allowed`, what
    each statement that only reads reads beyond it; raises SqlSyntaxError."""
    try:
        return _statements(sql, dialect, allowed)
    except RecursionError:
        # sqlglot walks and prints its trees recursively: a text of thousands of nested
        # parts (`a.a.a...`, `((((...`) exhausts the stack; it is not a query anyone wrote.
        raise SqlSyntaxError(
            f"not valid {dialect} SQL: nested too deeply for sqlglot to read (Python's "
            "recursion limit)"
        ) from None


def _statements(sql: str, dialect: str, allowed: Allowed | None) -> list[Statement]:
    sqlglot = _sqlglot()
    from sqlglot.errors import OptimizeError, ParseError, TokenError

    try:
        parsed = sqlglot.parse(sql, read=dialect)
    except (ParseError, TokenError) as error:
        raise SqlSyntaxError(_syntax_message(error, dialect)) from error
    found = [node for node in parsed if _is_statement(node)]
    _check_select_lists(found, dialect)
    result = []
    for index, node in enumerate(found, 1):
        problem = _problem(node)
        outside = None
        if allowed is not None and problem is None:
            try:
                outside = not_allowed(node, allowed)
            except OptimizeError as error:
                raise SqlSyntaxError(
                    f"cannot tell which tables and columns statement {index} reads: {error}"
                ) from error
        result.append(Statement(_kind(node), problem, outside))
    return result


def _check_select_lists(nodes: list[exp.Expression], dialect: str) -> None:
    """Raise SqlSyntaxError for a SELECT with nothing to select (`SELECT FROM t`), which
    sqlglot parses without complaint; PostgreSQL alone accepts it (zero columns)."""
    from sqlglot import exp
    from sqlglot.dialects.postgres import Postgres

    if type(_sqlglot().Dialect.get_or_raise(dialect)) is Postgres:
        return
    for select in (select for node in nodes for select in node.find_all(exp.Select)):
        if not select.expressions:
            near = _clip(select.sql(dialect=dialect))
            raise SqlSyntaxError(
                f"not valid {dialect} SQL: SELECT with nothing to select (near {near!r}); "
                "list the columns or expressions to select, or use *"
            )


def _is_statement(node: exp.Expression | None) -> bool:
    """False for what sqlglot returns where there is no statement: None for an empty one
    (`;;`), and a Semicolon node holding a comment after a `;` (`SELECT 1; -- done`)."""
    from sqlglot import exp

    return node is not None and not isinstance(node, exp.Semicolon)
