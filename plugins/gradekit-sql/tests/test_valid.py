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


# -- SQL in a fenced code block ------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        "Here is the query:\n\n```sql\nSELECT name FROM customers\n```\n\nIt lists every name.",
        "```\nSELECT name FROM customers\n```",
        "```SQL\nSELECT name FROM customers;\n```",
        "~~~sql\nSELECT name FROM customers\n~~~",
        "   ```sqlite\n   SELECT name FROM customers\n   ```",
        "Unclosed:\n```sql\nSELECT name FROM customers\n",
    ],
)
def test_sql_is_read_from_a_fenced_block(output: str) -> None:
    result = _grade(output)
    assert (result.outcome, result.message) == (
        "pass",
        "1 statement, a read: SELECT (read from fenced block 1 of 1)",
    )
    assert result.details["fence"] == {"block": 1, "blocks": 1}


def test_of_several_blocks_the_last_sql_block_is_read() -> None:
    output = (
        "First try:\n```sql\nDELETE FROM customers\n```\nBetter:\n```sql\nSELECT 1\n```\n"
        "Output:\n```\nname\nAda\n```\n```python\nprint(1)\n```"
    )
    result = _grade(output)
    assert (result.outcome, result.message) == (
        "pass",
        "1 statement, a read: SELECT (read from fenced block 2 of 4)",
    )
    # Without a block tagged sql, the last untagged one.
    result = _grade("```python\nx = 1\n```\n```\nSELECT 1\n```\n```\nSELECT 2; SELECT 3\n```")
    assert (
        result.message == "2 statements, all reads: SELECT, SELECT (read from fenced block 3 of 3)"
    )
    # A block tagged with the dialect's name counts as SQL.
    result = _grade("```\nSELECT 1\n```\n```postgres\nDELETE FROM t\n```", dialect="postgres")
    assert result.message.startswith("statement 1 of 1 does not only read: DELETE")
    assert result.message.endswith("(read from fenced block 2 of 2)")


def test_blocks_in_other_languages_only_are_a_failure_naming_them() -> None:
    result = _grade("Try this:\n```python\nrows = db.query('x')\n```")
    assert (result.outcome, result.message) == (
        "fail",
        "no SQL block in the output: its 1 fenced block is tagged python; tag the SQL block "
        "sql (or leave it untagged), or set extract: false to read the whole output as SQL",
    )


def test_extract_false_reads_the_whole_output() -> None:
    result = _grade("```sql\nSELECT 1\n```", extract=False)
    assert result.outcome == "fail"
    assert "fence" not in result.details
    assert _grade("SELECT '```'", extract=False).passed
    # Backticks inside SQL with no fence at the start of a line are not a fence.
    assert _grade("SELECT '```sql' AS fence").passed


# -- tables and columns ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM customers",
        "SELECT c.name FROM customers AS c",
        "SELECT name FROM main.customers",
        "SELECT name FROM CUSTOMERS",
        # A CTE named like a forbidden table is not that table.
        "WITH orders AS (SELECT name FROM customers) SELECT name FROM orders",
        "SELECT n FROM (SELECT name AS n FROM customers) AS orders",
        "SELECT 1",
    ],
)
def test_tables_allow_the_listed_tables_through_aliases_and_ctes(sql: str) -> None:
    result = _grade(sql, tables=["customers"])
    assert result.outcome == "pass", result.message


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT * FROM orders", "table 'orders'"),
        ("SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id", "table 'orders'"),
        (
            "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders)",
            "table 'orders'",
        ),
        ("WITH t AS (SELECT total FROM orders) SELECT * FROM t", "table 'orders'"),
        ("SELECT name FROM customers UNION SELECT total FROM payments", "table 'payments'"),
        ("SELECT * FROM orders o, payments p", "tables 'orders', 'payments'"),
    ],
)
def test_tables_refuse_any_other_table_naming_it(sql: str, named: str) -> None:
    result = _grade(sql, tables=["customers"])
    assert (result.outcome, result.message) == (
        "fail",
        f"statement 1 of 1 reads {named}, not among tables: customers",
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM customers WHERE id = 1",
        "SELECT c.name FROM customers AS c WHERE c.id > 1",
        "SELECT name AS city FROM customers ORDER BY city",
        "WITH t AS (SELECT name AS city FROM customers) SELECT city FROM t",
        "SELECT x.city FROM (SELECT name AS city FROM customers) AS x",
        "SELECT COUNT(*) FROM customers",
        "WITH c(k) AS (SELECT name FROM customers) SELECT k FROM c",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) "
        "SELECT i FROM n",
        "SELECT x, y FROM (VALUES (1, 2)) AS v(x, y)",
        "SELECT name FROM customers c WHERE EXISTS (SELECT 1 FROM customers d WHERE d.id = c.id)",
    ],
)
def test_columns_allow_the_listed_columns_through_aliases(sql: str) -> None:
    result = _grade(sql, columns=["id", "name"])
    assert result.outcome == "pass", result.message


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT city FROM customers", "column 'customers.city'"),
        ("SELECT c.city FROM customers AS c", "column 'customers.city'"),
        ("SELECT name FROM customers WHERE city = 'London'", "column 'customers.city'"),
        (
            "WITH t AS (SELECT city AS name FROM customers) SELECT name FROM t",
            "column 'customers.city'",
        ),
        ("SELECT * FROM customers", "column 'customers.*'"),
        ("SELECT c.* FROM customers AS c", "column 'customers.*'"),
        ("SELECT city, total FROM customers", "columns 'customers.city', 'customers.total'"),
    ],
)
def test_columns_refuse_any_other_column_naming_it(sql: str, named: str) -> None:
    result = _grade(sql, columns=["id", "name"])
    assert (result.outcome, result.message) == (
        "fail",
        f"statement 1 of 1 reads {named}, not among columns: id, name",
    )


def test_qualified_columns_allow_a_column_of_that_table_only() -> None:
    allowed = ["customers.id", "customers.name", "orders.customer_id", "orders.total"]
    join = "SELECT c.name, o.total FROM customers c JOIN orders o ON o.customer_id = c.id"
    assert _grade(join, columns=allowed).passed
    result = _grade("SELECT total FROM customers", columns=allowed)
    assert result.message == (
        "statement 1 of 1 reads column 'customers.total', not among columns: customers.id, "
        "customers.name, orders.customer_id, orders.total"
    )
    # An unqualified column of a join is allowed when one of the joined tables allows it.
    assert _grade("SELECT name, total FROM customers, orders", columns=allowed).passed
    result = _grade("SELECT city FROM customers, orders", columns=allowed)
    assert "reads column 'city', not among columns" in result.message


def test_columns_of_subqueries_and_joins_are_placed_in_their_own_tables() -> None:
    allowed = ["name", "id", "customer_id"]
    subquery = "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders{})"
    assert _grade(subquery.format(""), columns=allowed).passed
    result = _grade(subquery.format(" WHERE total > 5"), columns=allowed)
    assert result.message == (
        "statement 1 of 1 reads column 'orders.total', not among columns: name, id, customer_id"
    )
    # A correlated column may come from the enclosing query's table.
    correlated = "SELECT name FROM customers WHERE EXISTS (SELECT 1 FROM orders WHERE {} = id)"
    qualified = ["customers.name", "customers.id", "orders.customer_id"]
    assert _grade(correlated.format("customer_id"), columns=qualified).passed
    assert _grade(correlated.format("total"), columns=qualified).message.startswith(
        "statement 1 of 1 reads column 'orders.total'"
    )
    # JOIN ... USING (id) reads id.
    using = "SELECT COUNT(*) FROM customers JOIN orders USING (id)"
    assert _grade(using, columns=["id"]).passed
    assert _grade(using, columns=["name"]).message == (
        "statement 1 of 1 reads column 'id', not among columns: name"
    )


def test_tables_and_columns_together_list_every_name_and_details() -> None:
    result = _grade(
        "SELECT name FROM customers; SELECT o.total, city FROM orders o, customers",
        tables=["customers"],
        columns=["name"],
    )
    assert result.message == (
        "statement 2 of 2 reads table 'orders', not among tables: customers; "
        "columns 'orders.total', 'city', not among columns: name"
    )
    assert result.details["statements"][1]["not_allowed"] == {
        "tables": ["orders"],
        "columns": ["orders.total", "city"],
    }
    assert result.details["statements"][0]["not_allowed"] == {"tables": [], "columns": []}
    json.dumps(result.details, allow_nan=False)


def test_a_statement_that_writes_fails_for_that_before_its_names() -> None:
    result = _grade("DELETE FROM orders", tables=["customers"])
    assert result.message.startswith("statement 1 of 1 does not only read: DELETE is not a query")


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"tables": "customers"}, "$.tables: expected a list"),
        ({"tables": [""]}, "$.tables[0]: must be a table name, got ''"),
        (
            {"columns": ["a.b.c"]},
            "$.columns[0]: must be a column name or table.column, got 'a.b.c'",
        ),
        (
            {"columns": ["customers."]},
            "$.columns[0]: must be a column name or table.column, got 'customers.'",
        ),
    ],
)
def test_tables_and_columns_are_checked_when_created(
    config: dict[str, object], problem: str
) -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("sql.valid", config=config)
    assert problem in str(caught.value)


def test_sql_nested_too_deeply_for_sqlglot_fails_instead_of_raising() -> None:
    # Found by the contract kit: a dotted name of 16,667 parts exhausted Python's stack.
    result = _grade("a." * 2_000 + "a")
    assert (result.outcome, result.message) == (
        "fail",
        "not valid sqlite SQL: nested too deeply for sqlglot to read (Python's recursion limit)",
    )
