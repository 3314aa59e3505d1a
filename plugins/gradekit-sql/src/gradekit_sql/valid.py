"""The `sql.valid` kind: the output is SQL that parses and only reads.

Parsed with sqlglot in the given dialect, so the decision is made on a syntax tree, never on
regular expressions over the text (see `_statements` for what counts as a read). With
`tables` / `columns`, a statement must also read only those (see `_names`). An output in prose
is read from its fenced code block (see `_text.fenced_sql`), unless `extract` is false.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from gradekit import GradeResult, OptionError, Sample

from gradekit_sql._names import Allowed, NotAllowed
from gradekit_sql._statements import SqlSyntaxError, Statement, check_dialect, statements
from gradekit_sql._text import fenced_sql, not_sql, sql_text

__all__ = ["Valid"]

KIND = "sql.valid"


def _known_dialect(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    problem = check_dialect(value)
    if problem is not None:
        raise OptionError(attribute.name, f"{problem} (a sqlglot dialect name)")


def _table_names(_: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...] | None) -> None:
    for index, name in enumerate(value or ()):
        if not name.strip() or "." in name:
            raise OptionError(f"{attribute.name}[{index}]", f"must be a table name, got {name!r}")


def _column_names(_: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...] | None) -> None:
    for index, name in enumerate(value or ()):
        parts = name.split(".")
        if len(parts) > 2 or not all(part.strip() for part in parts):
            raise OptionError(
                f"{attribute.name}[{index}]",
                f"must be a column name or table.column, got {name!r}",
            )


def _quoted(names: tuple[str, ...], noun: str) -> str:
    listed = ", ".join(repr(name) for name in names)
    return f"{noun} {listed}" if len(names) == 1 else f"{noun}s {listed}"


@attrs.frozen(kw_only=True)
class Valid:
    """Passes when the output (or its fenced SQL block) is SQL that parses in `dialect` and
    whose every statement only reads (SELECT, WITH ... SELECT, UNION, VALUES...), and reads
    only the `tables` and `columns` listed, when they are."""

    kind: ClassVar[str] = KIND
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {},
        {"dialect": "postgres"},
        {"tables": ["customers"], "columns": ["customers.name", "city"], "extract": False},
    )

    name: str = KIND
    dialect: str = attrs.field(
        default="sqlite",
        validator=_known_dialect,
        metadata={"help": "sqlglot dialect the SQL is written in (sqlite, postgres, mysql...)"},
    )
    extract: bool = attrs.field(
        default=True,
        metadata={"help": "read the SQL of a fenced code block when the output has one"},
    )
    tables: tuple[str, ...] | None = attrs.field(
        default=None,
        validator=_table_names,
        metadata={"help": "the only tables the SQL may read (aliases and CTEs resolved)"},
    )
    columns: tuple[str, ...] | None = attrs.field(
        default=None,
        validator=_column_names,
        metadata={"help": "the only columns the SQL may read: name, or table.column"},
    )

    def grade(self, sample: Sample) -> GradeResult:
        """Parse the output and check every statement."""
        sql = sql_text(sample.output)
        if sql is None:
            return not_sql(KIND, self.name, sample.output)
        details: dict[str, Any] = {"dialect": self.dialect}
        where = ""
        fenced = fenced_sql(sql, self.dialect) if self.extract else None
        if fenced is not None:
            details["fence"] = {"block": fenced.block, "blocks": fenced.blocks}
            if fenced.sql is None:
                return self._no_sql_block(fenced.blocks, fenced.tags, details)
            sql = fenced.sql
            where = f" (read from fenced block {fenced.block} of {fenced.blocks})"
        try:
            found = statements(sql, self.dialect, self._allowed())
        except SqlSyntaxError as error:
            details["error"] = error.message
            return GradeResult(KIND, self.name, False, 0.0, error.message + where, details)
        details["statements"] = [statement.to_dict() for statement in found]
        if not found:
            message = "no SQL statement in the output" + where
            return GradeResult(KIND, self.name, False, 0.0, message, details)
        problem = self._problem(found)
        if problem is not None:
            return GradeResult(KIND, self.name, False, 0.0, problem + where, details)
        kinds = ", ".join(statement.kind for statement in found)
        count = "1 statement, a read" if len(found) == 1 else f"{len(found)} statements, all reads"
        return GradeResult(KIND, self.name, True, 1.0, f"{count}: {kinds}{where}", details)

    def _allowed(self) -> Allowed | None:
        if self.tables is None and self.columns is None:
            return None
        return Allowed(self.tables, self.columns)

    def _problem(self, found: list[Statement]) -> str | None:
        """Why the statements fail: the first that does not only read, else the first that
        reads a table or column not allowed; None when they pass."""
        bad = [(index, s) for index, s in enumerate(found, 1) if s.problem is not None]
        if bad:
            index, first = bad[0]
            message = f"statement {index} of {len(found)} does not only read: {first.problem}"
            if len(bad) > 1:
                message += f" (and {len(bad) - 1} more)"
            return message + "; only queries are allowed (SELECT, WITH ... SELECT, UNION, VALUES)"
        for index, statement in enumerate(found, 1):
            if statement.not_allowed:
                return f"statement {index} of {len(found)} reads " + self._outside(
                    statement.not_allowed
                )
        return None

    def _outside(self, names: NotAllowed) -> str:
        parts = []
        if names.tables:
            listed = ", ".join(self.tables or ())
            parts.append(f"{_quoted(names.tables, 'table')}, not among tables: {listed}")
        if names.columns:
            listed = ", ".join(self.columns or ())
            parts.append(f"{_quoted(names.columns, 'column')}, not among columns: {listed}")
        return "; ".join(parts)

    def _no_sql_block(
        self, blocks: int, tags: tuple[str, ...], details: dict[str, Any]
    ) -> GradeResult:
        which = "its 1 fenced block is" if blocks == 1 else f"its {blocks} fenced blocks are"
        message = (
            f"no SQL block in the output: {which} tagged {', '.join(tags)}; tag the SQL block "
            "sql (or leave it untagged), or set extract: false to read the whole output as SQL"
        )
        return GradeResult(KIND, self.name, False, 0.0, message, details)
