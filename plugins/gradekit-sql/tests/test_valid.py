"""sql.valid: parses, and every statement only reads."""

from __future__ import annotations

import json

import gradekit
import pytest


def _grade(sql: object, **options: object) -> gradekit.GradeResult:
    return gradekit.create("sql.valid", config=options).grade(gradekit.Sample(output=sql))


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT name FROM customers", "1 statement, a read: SELECT"),
        ("WITH a AS (SELECT 1 AS x) SELECT x FROM a", "1 statement, a read: SELECT"),
        ("SELECT 1 UNION SELECT 2", "1 statement, a read: UNION"),
        ("VALUES (1), (2)", "1 statement, a read: VALUES"),
        ("(SELECT 1)", "1 statement, a read: SELECT"),
        ("SELECT 1; SELECT 2;", "2 statements, all reads: SELECT, SELECT"),
        ("SELECT * FROM pragma_table_info('customers')", "1 statement, a read: SELECT"),
        ("select ';' as semicolon -- DELETE FROM t", "1 statement, a read: SELECT"),
        ("SELECT * FROM customers", "1 statement, a read: SELECT"),
        ("SELECT x FROM (SELECT 1 AS x)", "1 statement, a read: SELECT"),
        ("SELECT 1 WHERE 1 IN (SELECT 1) AND EXISTS (SELECT 1)", "1 statement, a read: SELECT"),
    ],
)
def test_reads_pass(sql: str, message: str) -> None:
    result = _grade(sql)
    assert result.outcome == "pass"
    assert result.message == message


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM customers; -- done",
        "SELECT 1; /* c */",
        "SELECT name FROM customers WHERE city = 'London';\n-- end",
    ],
)
def test_a_comment_after_the_last_semicolon_is_not_a_statement(sql: str) -> None:
    result = _grade(sql)
    assert (result.outcome, result.message) == ("pass", "1 statement, a read: SELECT")
    assert _grade("SELECT 1; -- one\nSELECT 2").message == (
        "2 statements, all reads: SELECT, SELECT"
    )


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("DELETE FROM customers", "statement 1 of 1 does not only read: DELETE is not a query"),
        ("INSERT INTO t VALUES (1)", "INSERT is not a query"),
        ("UPDATE t SET x = 1", "UPDATE is not a query"),
        ("CREATE TABLE t (x)", "CREATE is not a query"),
        ("DROP TABLE t", "DROP is not a query"),
        ("ALTER TABLE t ADD COLUMN y", "ALTER is not a query"),
        ("ATTACH DATABASE 'x.db' AS x", "ATTACH is not a query"),
        ("PRAGMA writable_schema = ON", "PRAGMA is not a query"),
        ("BEGIN", "TRANSACTION is not a query"),
        ("SELECT * INTO copy FROM t", "SELECT ... INTO creates a table"),
        ("REPLACE INTO t VALUES (1)", "REPLACE is not a query sqlglot can read"),
        ("VACUUM", "VACUUM is not a query sqlglot can read"),
        ("SELECT 1; DROP TABLE t", "statement 2 of 2 does not only read: DROP is not a query"),
        ("customers", "'customers' is an expression, not a statement"),
    ],
)
def test_statements_that_do_not_only_read_fail(sql: str, problem: str) -> None:
    result = _grade(sql)
    assert result.outcome == "fail"
    assert problem in result.message
    assert result.message.endswith(
        "; only queries are allowed (SELECT, WITH ... SELECT, UNION, VALUES)"
    )


def test_a_write_hidden_in_a_postgres_cte_fails() -> None:
    sql = "WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone"
    result = _grade(sql, dialect="postgres")
    assert result.outcome == "fail"
    assert "it contains DELETE, which is not a read" in result.message
    assert _grade("SELECT * FROM t FOR UPDATE", dialect="postgres").message.startswith(
        "statement 1 of 1 does not only read: FOR UPDATE locks rows"
    )


def test_every_statement_is_listed_in_details() -> None:
    result = _grade("SELECT 1; DELETE FROM t; UPDATE t SET x = 1")
    assert result.message.startswith("statement 2 of 3 does not only read: DELETE is not a query")
    assert "(and 1 more)" in result.message
    assert result.details == {
        "dialect": "sqlite",
        "statements": [
            {"kind": "SELECT", "read": True, "problem": None},
            {"kind": "DELETE", "read": False, "problem": "DELETE is not a query"},
            {"kind": "UPDATE", "read": False, "problem": "UPDATE is not a query"},
        ],
    }
    json.dumps(result.details, allow_nan=False)


def test_sql_that_does_not_parse_fails_saying_where() -> None:
    result = _grade("SELEC name FROM customers")
    assert result.outcome == "fail"
    assert result.message.startswith("not valid sqlite SQL: ")
    assert "line 1, column" in result.message
    assert "\x1b" not in result.message  # no terminal colours from sqlglot
    assert _grade("SELECT 'unclosed").outcome == "fail"


@pytest.mark.parametrize(
    ("sql", "near"),
    [
        ("SELECT", "SELECT"),
        ("SELECT FROM customers", "SELECT FROM customers"),
        ("SELECT DISTINCT FROM customers", "SELECT DISTINCT FROM customers"),
        ("SELECT 1 UNION SELECT", "SELECT"),
        ("SELECT * FROM (SELECT) AS s", "SELECT"),
        ("WITH a AS (SELECT FROM t) SELECT * FROM a", "SELECT FROM t"),
    ],
)
def test_a_select_with_nothing_to_select_does_not_parse(sql: str, near: str) -> None:
    result = _grade(sql)
    assert result.outcome == "fail"
    assert result.message == (
        f"not valid sqlite SQL: SELECT with nothing to select (near {near!r}); "
        "list the columns or expressions to select, or use *"
    )
    assert result.details == {"dialect": "sqlite", "error": result.message}


def test_postgres_allows_a_select_of_no_columns() -> None:
    result = _grade("SELECT FROM customers", dialect="postgres")
    assert (result.outcome, result.message) == ("pass", "1 statement, a read: SELECT")


def test_the_dialect_decides_what_parses() -> None:
    # T-SQL's TOP is not SQLite syntax.
    assert _grade("SELECT TOP 1 name FROM customers", dialect="tsql").passed
    assert not _grade("SELECT TOP 1 name FROM customers").passed


def test_empty_sql_fails_and_structured_output_is_an_error() -> None:
    assert _grade("").message == "no SQL statement in the output"
    assert _grade(" ; ").message == "no SQL statement in the output"
    assert _grade(None).outcome == "fail"
    structured = _grade({"sql": "SELECT 1"})
    assert (structured.outcome, structured.message) == (
        "error",
        "the output is a mapping, not SQL text",
    )


def test_an_unknown_dialect_is_a_config_error_with_a_suggestion() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("sql.valid", config={"dialect": "postgress"})
    assert str(caught.value).splitlines()[1] == (
        "$.dialect: Unknown dialect 'postgress'. Did you mean postgres? (a sqlglot dialect name)"
    )
