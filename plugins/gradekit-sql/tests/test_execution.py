"""sql.execution: result sets compared as a user sees them, on a real SQLite file."""

from __future__ import annotations

import json
import pickle
import sqlite3
import textwrap
import time
from pathlib import Path
from typing import NamedTuple

import gradekit
import pytest

from conftest import Grade, make_shop

REFERENCE = "SELECT name, city FROM customers WHERE city = 'London'"


def test_same_rows_in_another_order_pass(grade: Grade) -> None:
    result = grade(
        "SELECT name, city FROM customers WHERE id IN (3, 1) ORDER BY id DESC", REFERENCE
    )
    assert result.outcome == "pass"
    assert result.score == 1.0
    assert result.message == "same result as the reference: 2 rows (in any order)"
    assert result.details == {
        "rows": {"output": 2, "expected": 2},
        "columns": {"output": 2, "expected": 2},
        "ordered": False,
    }


def test_different_rows_fail_naming_missing_and_unexpected_rows(grade: Grade) -> None:
    result = grade("SELECT name, city FROM customers WHERE city != 'New York'", REFERENCE)
    assert result.outcome == "fail"
    assert result.score == 0.0
    assert result.message == (
        "result differs from the reference: 1 unexpected, e.g. ('Edsger', 'Amsterdam') "
        "(the query returned 3 rows, the reference 2)"
    )
    assert result.details["missing"] == []
    assert result.details["unexpected"] == [["Edsger", "Amsterdam"]]
    assert result.details["unexpected_count"] == 1


def test_duplicates_count_as_in_a_multiset(grade: Grade) -> None:
    # London appears twice in the reference; DISTINCT drops one: a different multiset.
    result = grade("SELECT DISTINCT city FROM customers", "SELECT city FROM customers")
    assert result.outcome == "fail"
    assert result.details["missing"] == [["London"]]
    assert result.details["missing_count"] == 1


def test_listed_rows_are_bounded_and_counted(grade: Grade) -> None:
    result = grade(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) "
        "SELECT i FROM n",
        "SELECT id FROM orders WHERE id < 0",
    )
    assert result.outcome == "fail"
    assert result.details["unexpected_count"] == 40
    assert len(result.details["unexpected"]) == 5


def test_columns_must_match_in_number(grade: Grade) -> None:
    result = grade("SELECT name FROM customers WHERE city = 'London'", REFERENCE)
    assert result.outcome == "fail"
    assert result.message == "the query returns 1 column, the reference 2"


# Two empty results whose columns differ. Spider's test-suite evaluation (`result_eq` in
# exec_eval.py: "if len(result1) == 0 and len(result2) == 0: return True") and BIRD's
# (`set(predicted_res) == set(ground_truth_res)`) both count this pair as correct.
EMPTY_ONE_COLUMN = "SELECT name FROM customers WHERE id < 0"
EMPTY_TWO_COLUMNS = "SELECT name, city FROM customers WHERE id < 0"


def test_two_empty_results_with_different_columns_fail_by_default(grade: Grade) -> None:
    result = grade(EMPTY_ONE_COLUMN, EMPTY_TWO_COLUMNS)
    assert (result.outcome, result.message) == (
        "fail",
        "the query returns 1 column, the reference 2",
    )


def test_compare_rows_passes_two_empty_results_as_spider_and_bird_do(grade: Grade) -> None:
    result = grade(EMPTY_ONE_COLUMN, EMPTY_TWO_COLUMNS, compare="rows")
    assert (result.outcome, result.message) == (
        "pass",
        "same rows as the reference: none (compare: rows; the query returns 1 column, "
        "the reference 2)",
    )
    assert result.details["columns"] == {"output": 1, "expected": 2}
    assert result.details["compare"] == "rows"
    # Rows that are there still differ by their width, as in both benchmarks.
    result = grade("SELECT name FROM customers WHERE city = 'London'", REFERENCE, compare="rows")
    assert (result.outcome, result.message) == (
        "fail",
        "the query returns 1 column, the reference 2",
    )
    assert grade(EMPTY_ONE_COLUMN, EMPTY_ONE_COLUMN, compare="rows").passed
    assert grade(EMPTY_ONE_COLUMN, EMPTY_TWO_COLUMNS, compare="rows", ordered=True).passed


def test_compare_takes_only_its_two_values() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("sql.execution", config={"compare": "row"})
    assert "$.compare: expected one of 'columns_and_rows', 'rows', got 'row'" in str(caught.value)


def test_swapped_columns_differ(grade: Grade) -> None:
    # Column order matters (as in BIRD's comparison of row tuples).
    result = grade("SELECT city, name FROM customers WHERE city = 'London'", REFERENCE)
    assert result.outcome == "fail"


def test_ordered_compares_row_by_row(grade: Grade) -> None:
    reference = "SELECT name FROM customers ORDER BY name"
    assert grade("SELECT name FROM customers ORDER BY name", reference, ordered=True).passed
    reversed_ = grade("SELECT name FROM customers ORDER BY name DESC", reference, ordered=True)
    assert reversed_.outcome == "fail"
    assert reversed_.message == (
        "row 0 differs from the reference: expected ('Ada'), got ('Grace')"
    )
    assert reversed_.details["first_difference"] == {
        "row": 0,
        "expected": ["Ada"],
        "output": ["Grace"],
    }
    # Unordered, the same two queries agree.
    assert grade("SELECT name FROM customers ORDER BY name DESC", reference).passed


def test_ordered_names_a_shorter_result(grade: Grade) -> None:
    result = grade(
        "SELECT name FROM customers ORDER BY name LIMIT 2",
        "SELECT name FROM customers ORDER BY name",
        ordered=True,
    )
    assert result.message == (
        "the query returned 2 rows, the reference 4; the first 2 rows are equal"
    )
    assert result.details["first_difference"] == {"row": 2, "expected": ["Edsger"], "output": None}


def test_reals_compare_within_the_tolerance(grade: Grade) -> None:
    average = "SELECT customer_id, AVG(total) FROM orders GROUP BY customer_id"
    by_hand = "SELECT customer_id, SUM(total) / COUNT(*) FROM orders GROUP BY customer_id"
    assert grade(by_hand, average).passed
    rounded = "SELECT customer_id, ROUND(AVG(total), 1) FROM orders GROUP BY customer_id"
    assert grade(rounded, average).outcome == "fail"
    assert grade(rounded, average, tolerance=0.05).passed


def test_tolerance_is_absolute_below_one_and_relative_above(grade: Grade) -> None:
    assert grade("SELECT 0.0000009", "SELECT 0.0", tolerance=1e-6).passed
    assert not grade("SELECT 0.0000011", "SELECT 0.0", tolerance=1e-6).passed
    assert grade("SELECT 1000000.9", "SELECT 1000000.0", tolerance=1e-6).passed
    assert not grade("SELECT 1000001.1", "SELECT 1000000.0", tolerance=1e-6).passed


def test_integers_compare_exactly_and_equal_reals_of_the_same_value(grade: Grade) -> None:
    assert not grade("SELECT 1000000000001", "SELECT 1000000000000", tolerance=0.5).passed
    assert grade("SELECT 3", "SELECT 3.0", tolerance=0).passed
    assert not grade("SELECT '3'", "SELECT 3").passed  # text is not a number


def test_rows_pair_within_the_tolerance_whatever_their_order(grade: Grade) -> None:
    result = grade(
        "SELECT 1.0000001, 'b' UNION ALL SELECT 1.0, 'a'",
        "SELECT 1.0, 'b' UNION ALL SELECT 1.0000001, 'a'",
    )
    assert result.passed, result.message


def test_an_sql_error_in_the_query_is_a_failure_with_its_message(grade: Grade) -> None:
    result = grade("SELECT nme FROM customers", REFERENCE)
    assert result.outcome == "fail"
    assert result.message == "the query failed: no such column: nme"
    assert result.details == {"error": "no such column: nme", "rows": {"expected": 2}}


def test_several_statements_are_a_failure(grade: Grade) -> None:
    result = grade("SELECT 1; SELECT 2", "SELECT 1")
    assert result.outcome == "fail"
    assert "one statement at a time" in result.message


def test_an_error_in_the_reference_is_an_error_not_a_failure(grade: Grade) -> None:
    result = grade(REFERENCE, "SELECT * FROM customer")
    assert result.outcome == "error"
    assert result.message == (
        "the reference query failed: no such table: customer; fix the case's expected SQL"
    )
    assert result.error == "ValueError: " + result.message


def test_a_missing_database_is_an_error_naming_the_path(tmp_path: Path) -> None:
    grader = gradekit.create("sql.execution", config={"database": str(tmp_path / "nope.sqlite")})
    result = grader.grade(gradekit.Sample(output="SELECT 1", expected="SELECT 1"))
    assert result.outcome == "error"
    assert result.message.startswith(f"database not found: {str(tmp_path / 'nope.sqlite')!r}")


def test_a_file_that_is_not_a_database_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.sqlite").write_text("just text, long enough to not be a database " * 20)
    grader = gradekit.create("sql.execution", config={"database": str(tmp_path / "notes.sqlite")})
    result = grader.grade(gradekit.Sample(output="SELECT 1", expected="SELECT 1"))
    assert result.outcome == "error"
    assert "file is not a database" in result.message


def test_no_database_at_all_is_an_error() -> None:
    result = gradekit.create("sql.execution").grade(
        gradekit.Sample(output="SELECT 1", expected="SELECT 1")
    )
    assert result.outcome == "error"
    assert result.message.startswith("no database: set the option 'database'")


def test_bad_samples_give_error_or_failure_results_never_raise(grade: Grade) -> None:
    assert grade("SELECT 1", None).outcome == "error"
    assert grade("SELECT 1", "  ").outcome == "error"
    assert grade({"sql": "SELECT 1"}, "SELECT 1").outcome == "error"
    empty = grade("", "SELECT 1")
    assert (empty.outcome, empty.message) == ("fail", "the output is empty; expected an SQL query")
    assert grade(None, "SELECT 1").outcome == "fail"
    assert grade("SELECT '\x00'", "SELECT 1").outcome == "fail"


@pytest.mark.parametrize(
    ("expected", "what"),
    [
        (["SELECT name FROM customers", "SELECT city FROM customers"], "a list"),
        ({"sql": "SELECT name FROM customers"}, "a mapping"),
        (42, "a number"),
    ],
)
def test_an_expected_value_that_is_not_text_is_an_error_saying_what_it_is(
    grade: Grade, expected: object, what: str
) -> None:
    result = grade("SELECT name FROM customers", expected)
    assert (result.outcome, result.message) == (
        "error",
        f"the expected value is {what}, not SQL text: sql.execution runs one reference query; "
        "give the reference SQL as text in 'expected'",
    )


def test_writes_fail_and_leave_the_database_as_it_was(grade: Grade, shop: Path) -> None:
    result = grade("DELETE FROM customers", "SELECT 1")
    assert result.outcome == "fail"
    assert result.message == "the query failed: attempt to write a readonly database"
    assert _count(shop, "customers") == 4
    # Without the read-only connection, the same statement deletes every customer.
    plain = sqlite3.connect(shop)
    with plain:
        plain.execute("DELETE FROM customers")
    plain.close()
    assert _count(shop, "customers") == 0


def test_attach_is_refused_so_no_file_is_created(grade: Grade, shop: Path, tmp_path: Path) -> None:
    created = tmp_path / "created.sqlite"
    result = grade(f"ATTACH DATABASE '{created}' AS other", "SELECT 1")
    assert result.outcome == "fail"
    assert result.message.startswith(f"the query failed: ATTACH '{created}' is not allowed")
    assert not created.exists()
    # Read-only mode and query_only alone do not stop ATTACH from creating the file.
    connection = sqlite3.connect(shop.as_uri() + "?mode=ro", uri=True)
    connection.execute("PRAGMA query_only = ON")
    connection.execute(f"ATTACH DATABASE '{created}' AS other")
    connection.close()
    assert created.exists()


def test_lifting_query_only_is_refused(grade: Grade) -> None:
    result = grade("PRAGMA query_only = OFF", "SELECT 1")
    assert result.outcome == "fail"
    assert "PRAGMA query_only = OFF is not allowed" in result.message


def test_a_query_past_its_timeout_is_interrupted_and_fails(grade: Grade) -> None:
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    start = time.monotonic()
    result = grade(endless, "SELECT 1", timeout=0.5)
    elapsed = time.monotonic() - start
    assert result.outcome == "fail"
    assert result.message == (
        "the query failed: did not finish within 0.5s (timeout, both queries together)"
    )
    assert elapsed < 3


def test_a_reference_past_the_timeout_is_an_error(grade: Grade) -> None:
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    result = grade("SELECT 1", endless, timeout=0.3)
    assert result.outcome == "error"
    assert result.message == "the reference query did not finish within 0.3s; raise timeout"


def test_more_rows_than_max_rows_fail(grade: Grade) -> None:
    result = grade("SELECT * FROM orders", "SELECT 1", max_rows=5)
    assert result.outcome == "fail"
    assert result.message == "the query failed: returned more than 5 rows (max_rows)"


def test_details_are_strict_json_for_blobs_infinities_and_long_text(grade: Grade) -> None:
    result = grade(
        "SELECT x'00ff', 1e999, printf('%.300c', 'a')",
        "SELECT x'00', -1e999, 'short'",
    )
    assert result.outcome == "fail"
    text = json.dumps(result.details, allow_nan=False)
    assert json.loads(text)["unexpected"] == [["x'00ff'", "Infinity", "a" * 199 + "…"]]
    assert json.loads(text)["missing"] == [["x'00'", "-Infinity", "short"]]


def test_text_that_is_not_utf8_is_compared_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.sqlite"
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("CREATE TABLE t (x TEXT)")
        connection.execute("INSERT INTO t VALUES (CAST(x'e9' AS TEXT))")
    connection.close()
    grader = gradekit.create("sql.execution", config={"database": str(path)})
    assert grader.grade(
        gradekit.Sample(output="SELECT x FROM t", expected="SELECT * FROM t")
    ).passed


def test_options_are_checked_when_created() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("sql.execution", config={"tolerance": -1, "timeout": 0, "orderd": True})
    assert "unknown option 'orderd' for kind 'sql.execution' (did you mean 'ordered'?)" in str(
        caught.value
    )
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("sql.execution", config={"tolerance": -1})
    assert "$.tolerance: must be a number >= 0, got -1.0" in str(caught.value)


def test_a_pickled_grader_grades_the_same(grade: Grade, shop: Path) -> None:
    grader = gradekit.create("sql.execution", config={"database": shop.name, "ordered": True})
    copy = pickle.loads(pickle.dumps(grader))
    sample = gradekit.Sample(output="SELECT 1", expected="SELECT 1")
    assert copy == grader
    assert copy.grade(sample) == grader.grade(sample)


def _count(path: Path, table: str) -> int:
    connection = sqlite3.connect(path)
    try:
        return int(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        connection.close()


# -- from a suite file --------------------------------------------------------------------


def test_database_paths_resolve_against_the_suite_folder(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    (suite_dir / "dbs").mkdir(parents=True)
    make_shop(suite_dir / "dbs" / "shop.sqlite")
    make_shop(suite_dir / "dbs" / "other.sqlite")
    with sqlite3.connect(suite_dir / "dbs" / "other.sqlite") as other:
        other.execute("DELETE FROM customers WHERE id > 1")
    suite = suite_dir / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """
            name: text-to-sql
            graders:
              - kind: sql.execution
                database: dbs/shop.sqlite
            cases:
              - name: right
                output: "SELECT name FROM customers WHERE city = 'London'"
                expected: "SELECT name FROM customers WHERE id IN (1, 3)"
              - name: wrong
                output: "SELECT name FROM customers"
                expected: "SELECT name FROM customers WHERE id IN (1, 3)"
              - name: per-case database
                database: dbs/other.sqlite
                output: "SELECT name FROM customers"
                expected: "SELECT 'Ada'"
              - name: missing database
                database: dbs/missing.sqlite
                output: "SELECT 1"
                expected: "SELECT 1"
              - name: in a child process
                output: "SELECT name FROM customers WHERE city = 'London'"
                expected: "SELECT name FROM customers WHERE id IN (1, 3)"
                graders:
                  - {kind: sql.execution, database: dbs/shop.sqlite, isolation: process}
            """
        )
    )
    report = gradekit.run_suite(gradekit.load_suite(suite))
    outcomes = {
        case.name: [record.result.outcome for record in case.turns[0].results]
        for case in report.cases
    }
    assert outcomes == {
        "right": ["pass"],
        "wrong": ["fail"],
        "per-case database": ["pass"],
        "missing database": ["error"],
        # The suite-level grader, and the same kind pickled into a process worker.
        "in a child process": ["pass", "pass"],
    }
    missing = report.cases[3].turns[0].results[0].result.message
    assert str(suite_dir / "dbs" / "missing.sqlite") in missing


# Spider's and BIRD's verdicts on pairs of queries, as their evaluation scripts decide them
# (Spider: test-suite-sql-eval, DISTINCT removed from both queries by default, rows as
# multisets, columns in any order, two empty results equal; BIRD: `set(predicted) ==
# set(gold)`), beside sql.execution's verdict by default and with `compare: rows`. Each pair
# where the verdicts differ names the README's words for that difference.
class PeerCase(NamedTuple):
    output: str
    reference: str
    spider: bool
    bird: bool
    default: bool
    rows: bool
    documented: str = ""


PEER_CASES = [
    PeerCase(
        "SELECT name FROM customers ORDER BY name DESC",
        "SELECT name FROM customers",
        spider=True,
        bird=True,
        default=True,
        rows=True,
    ),
    PeerCase(
        "SELECT DISTINCT city FROM customers",
        "SELECT city FROM customers",
        spider=True,
        bird=True,
        default=False,
        rows=False,
        documented="`sql.execution` counts duplicates",
    ),
    PeerCase(
        "SELECT city, name FROM customers",
        "SELECT name, city FROM customers",
        spider=True,
        bird=False,
        default=False,
        rows=False,
        documented="columns must come in the\n  reference's order",
    ),
    PeerCase(
        EMPTY_ONE_COLUMN,
        EMPTY_TWO_COLUMNS,
        spider=True,
        bird=True,
        default=False,
        rows=True,
        documented="Set\n  `compare: rows` for the benchmarks' behaviour",
    ),
    PeerCase(
        "SELECT name FROM customers WHERE city = 'London'",
        "SELECT name, city FROM customers WHERE city = 'London'",
        spider=False,
        bird=False,
        default=False,
        rows=False,
    ),
]


@pytest.mark.parametrize("case", PEER_CASES)
def test_verdicts_beside_spider_and_bird(grade: Grade, case: PeerCase) -> None:
    assert grade(case.output, case.reference).passed is case.default
    assert grade(case.output, case.reference, compare="rows").passed is case.rows
    if case.default == case.spider == case.bird:
        assert not case.documented
    else:
        readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
        assert case.documented in readme
