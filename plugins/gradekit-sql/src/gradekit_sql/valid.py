"""The `sql.valid` kind: the output is SQL that parses and only reads.

Parsed with sqlglot in the given dialect, so the decision is made on a syntax tree, never on
regular expressions over the text (see `_statements` for what counts as a read).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from gradekit import GradeResult, OptionError, Sample

from gradekit_sql._statements import SqlSyntaxError, check_dialect, statements
from gradekit_sql._text import not_sql, sql_text

__all__ = ["Valid"]

KIND = "sql.valid"


def _known_dialect(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    problem = check_dialect(value)
    if problem is not None:
        raise OptionError(attribute.name, f"{problem} (a sqlglot dialect name)")


@attrs.frozen(kw_only=True)
class Valid:
    """Passes when the output is SQL that parses in `dialect` and whose every statement only
    reads (SELECT, WITH ... SELECT, UNION, VALUES...)."""

    kind: ClassVar[str] = KIND
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = ({}, {"dialect": "postgres"})

    name: str = KIND
    dialect: str = attrs.field(
        default="sqlite",
        validator=_known_dialect,
        metadata={"help": "sqlglot dialect the SQL is written in (sqlite, postgres, mysql...)"},
    )

    def grade(self, sample: Sample) -> GradeResult:
        """Parse the output and check every statement."""
        sql = sql_text(sample.output)
        if sql is None:
            return not_sql(KIND, self.name, sample.output)
        details: dict[str, Any] = {"dialect": self.dialect}
        try:
            found = statements(sql, self.dialect)
        except SqlSyntaxError as error:
            details["error"] = error.message
            return GradeResult(KIND, self.name, False, 0.0, error.message, details)
        details["statements"] = [statement.to_dict() for statement in found]
        if not found:
            return GradeResult(
                KIND, self.name, False, 0.0, "no SQL statement in the output", details
            )
        bad = [(index, s) for index, s in enumerate(found, 1) if s.problem is not None]
        kinds = ", ".join(statement.kind for statement in found)
        if not bad:
            count = (
                "1 statement, a read" if len(found) == 1 else f"{len(found)} statements, all reads"
            )
            return GradeResult(KIND, self.name, True, 1.0, f"{count}: {kinds}", details)
        index, first = bad[0]
        message = f"statement {index} of {len(found)} does not only read: {first.problem}"
        if len(bad) > 1:
            message += f" (and {len(bad) - 1} more)"
        message += "; only queries are allowed (SELECT, WITH ... SELECT, UNION, VALUES)"
        return GradeResult(KIND, self.name, False, 0.0, message, details)
