"""The `sql.execution` kind: execution accuracy for text-to-SQL on a SQLite database.

The agent's SQL (the sample's output) and the reference SQL (its expected value) both run on
the same database, read-only, and their result sets are compared: as multisets of rows by
default, in order with `ordered: true`, numbers within `tolerance` (see `_compare`). The
number of columns counts too, unless `compare: rows` compares only the rows, as Spider's and
BIRD's evaluations do (two empty results are then equal whatever their columns).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

import attrs
from gradekit import GradeResult, OptionError, Sample, current_suite_dir

from gradekit_sql._compare import first_difference, unordered_difference
from gradekit_sql._database import QueryError, Rows, read_only, run_query
from gradekit_sql._render import json_rows, row_text
from gradekit_sql._text import data_error, not_sql, sql_text, what_it_is

__all__ = ["Execution"]

KIND = "sql.execution"


def _non_negative(_: Any, attribute: attrs.Attribute[float], value: float) -> None:
    if not value >= 0:  # also refuses NaN
        raise OptionError(attribute.name, f"must be a number >= 0, got {value!r}")


def _positive(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value > 0:
        raise OptionError(attribute.name, f"must be > 0, got {value!r}")


def _base_dir() -> str:
    """Where relative database paths resolve: the suite's folder, or the working directory."""
    return str(current_suite_dir() or Path.cwd())


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def _columns(count: int) -> str:
    return f"{count} column" if count == 1 else f"{count} columns"


@attrs.frozen(kw_only=True)
class Execution:
    """Runs the output's SQL and the expected SQL on a SQLite database and passes when their
    result sets are equal (as multisets of rows, or in order with `ordered`)."""

    kind: ClassVar[str] = KIND
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"database": "shop.sqlite"},
        {"database": "shop.sqlite", "ordered": True, "tolerance": 0.001, "timeout": 5},
        {"database": "shop.sqlite", "compare": "rows"},
    )

    name: str = KIND
    database: str | None = attrs.field(
        default=None,
        metadata={"help": "SQLite file, relative to the suite file; a case's `database` wins"},
    )
    ordered: bool = attrs.field(
        default=False, metadata={"help": "compare rows in order instead of as a multiset"}
    )
    tolerance: float = attrs.field(
        default=1e-6,
        validator=_non_negative,
        metadata={"help": "REALs equal when |a-b| <= tolerance * max(1, |a|, |b|)"},
    )
    timeout: float = attrs.field(
        default=10.0,
        validator=_positive,
        metadata={"help": "seconds both queries together may run"},
    )
    compare: Literal["columns_and_rows", "rows"] = attrs.field(
        default="columns_and_rows",
        metadata={
            "help": "rows: compare only the rows (two empty results are equal whatever their "
            "columns, as in Spider and BIRD)"
        },
    )
    max_rows: int = attrs.field(
        default=100_000,
        validator=_positive,
        metadata={"help": "a query returning more rows fails (the reference: an error)"},
    )
    _base_dir: str = attrs.field(init=False, factory=_base_dir)

    def grade(self, sample: Sample) -> GradeResult:
        """Run both queries and compare their results."""
        reference = sql_text(sample.expected)
        if reference is None:
            return data_error(
                KIND,
                self.name,
                f"the expected value is {what_it_is(sample.expected)}, not SQL text: "
                "sql.execution runs one reference query; give the reference SQL as text in "
                "'expected'",
            )
        if not reference.strip():
            return data_error(
                KIND,
                self.name,
                "no reference query: sql.execution runs the sample's expected value as SQL; "
                "add the reference SQL as 'expected' to the case or turn",
            )
        query = sql_text(sample.output)
        if query is None:
            return not_sql(KIND, self.name, sample.output)
        database = self._database(sample)
        if isinstance(database, GradeResult):
            return database
        if not query.strip():
            return self._result(False, "the output is empty; expected an SQL query")
        deadline = time.monotonic() + self.timeout
        try:
            with read_only(database) as (connection, guard):
                try:
                    expected = run_query(
                        connection, guard, reference, deadline=deadline, max_rows=self.max_rows
                    )
                except QueryError as error:
                    return self._reference_failed(error)
                try:
                    output = run_query(
                        connection, guard, query, deadline=deadline, max_rows=self.max_rows
                    )
                except QueryError as error:
                    return self._query_failed(error, expected)
        except (sqlite3.Error, OSError) as error:  # the file is not a database, unreadable...
            return data_error(
                KIND, self.name, f"cannot open the database {str(database)!r}: {error}"
            )
        return self._compare(expected, output)

    # -- the database ---------------------------------------------------------------------

    def _database(self, sample: Sample) -> Path | GradeResult:
        given = sample.metadata.get("database", self.database)
        source = "the case's 'database'" if "database" in sample.metadata else "option 'database'"
        if given is None:
            return data_error(
                KIND,
                self.name,
                "no database: set the option 'database' or give the case a 'database' key "
                "(a SQLite file, relative to the suite file)",
            )
        if not isinstance(given, str) or not given:
            return data_error(
                KIND, self.name, f"{source} must be a path to a SQLite file, got {given!r}"
            )
        path = Path(given).expanduser()
        origin = f"{source} is {given!r}"
        if not path.is_absolute():
            path = Path(self._base_dir) / path
            origin += f", relative to {self._base_dir!r}"
        if not path.is_file():
            return data_error(
                KIND,
                self.name,
                f"database not found: {str(path)!r} ({origin}); create it or fix the path",
            )
        return path

    # -- results --------------------------------------------------------------------------

    def _result(
        self, passed: bool, message: str, details: Mapping[str, Any] | None = None
    ) -> GradeResult:
        return GradeResult(KIND, self.name, passed, 1.0 if passed else 0.0, message, details)

    def _reference_failed(self, error: QueryError) -> GradeResult:
        if error.reason == "timeout":
            message = f"the reference query did not finish within {self.timeout:g}s; raise timeout"
        else:
            message = f"the reference query failed: {error.message}; fix the case's expected SQL"
        return data_error(KIND, self.name, message, {"reference_error": error.message})

    def _query_failed(self, error: QueryError, expected: Rows) -> GradeResult:
        if error.reason == "timeout":
            text = f"did not finish within {self.timeout:g}s (timeout, both queries together)"
        else:
            text = error.message
        details = {"error": text, "rows": {"expected": len(expected.rows)}}
        return self._result(False, f"the query failed: {text}", details)

    def _compare(self, expected: Rows, output: Rows) -> GradeResult:
        details: dict[str, Any] = {
            "rows": {"output": len(output.rows), "expected": len(expected.rows)},
            "columns": {"output": output.columns, "expected": expected.columns},
            "ordered": self.ordered,
        }
        if self.compare == "rows":
            details["compare"] = self.compare
        if output.columns != expected.columns:
            if self.compare == "rows" and not output.rows and not expected.rows:
                message = (
                    f"same rows as the reference: none (compare: rows; the query returns "
                    f"{_columns(output.columns)}, the reference {expected.columns})"
                )
                return self._result(True, message, details)
            message = (
                f"the query returns {_columns(output.columns)}, the reference {expected.columns}"
            )
            return self._result(False, message, details)
        if self.ordered:
            return self._compare_ordered(expected, output, details)
        difference = unordered_difference(expected.rows, output.rows, self.tolerance)
        if difference.empty:
            message = f"same result as the reference: {_rows(len(output.rows))} (in any order)"
            return self._result(True, message, details)
        parts = []
        if difference.missing:
            parts.append(
                f"{len(difference.missing)} of {_rows(len(expected.rows))} of the reference "
                f"missing, e.g. {row_text(difference.missing[0])}"
            )
        if difference.unexpected:
            example = row_text(difference.unexpected[0])
            parts.append(f"{len(difference.unexpected)} unexpected, e.g. {example}")
        message = (
            f"result differs from the reference: {'; '.join(parts)} (the query returned "
            f"{_rows(len(output.rows))}, the reference {len(expected.rows)})"
        )
        details["missing"] = json_rows(difference.missing)
        details["missing_count"] = len(difference.missing)
        details["unexpected"] = json_rows(difference.unexpected)
        details["unexpected_count"] = len(difference.unexpected)
        return self._result(False, message, details)

    def _compare_ordered(
        self, expected: Rows, output: Rows, details: dict[str, Any]
    ) -> GradeResult:
        index = first_difference(expected.rows, output.rows, self.tolerance)
        if index is None:
            message = f"same result as the reference: {_rows(len(output.rows))}, in order"
            return self._result(True, message, details)
        want = expected.rows[index] if index < len(expected.rows) else None
        got = output.rows[index] if index < len(output.rows) else None
        details["first_difference"] = {
            "row": index,
            "expected": None if want is None else json_rows([want])[0],
            "output": None if got is None else json_rows([got])[0],
        }
        if want is None or got is None:
            message = (
                f"the query returned {_rows(len(output.rows))}, the reference {len(expected.rows)}"
            )
            if index:
                message += f"; the first {_rows(index)} are equal"
        else:
            message = (
                f"row {index} differs from the reference: expected {row_text(want)}, "
                f"got {row_text(got)}"
            )
        return self._result(False, message, details)
