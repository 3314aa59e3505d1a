"""gradekit's contract kit over both kinds (skipped until gradekit.testing is available)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gradekit
import pytest

pytest.importorskip("gradekit.testing")

from gradekit.testing import GraderContract, check_grader, samples
from hypothesis import settings
from hypothesis import strategies as st

from conftest import make_shop
from gradekit_sql.execution import Execution

# One shop database for the whole module: the kit's configs are class attributes.
_SHOP = str(make_shop(Path(tempfile.mkdtemp(prefix="gradekit-sql-contract-")) / "shop.sqlite"))

# Queries that run on the shop database (and a few that do not), so that pairs of them reach
# sql.execution's comparison: equal and unequal rows, other columns, REALs, NULL, blobs, an
# infinity, no rows, and errors in either query.
_QUERIES = (
    "SELECT name FROM customers",
    "SELECT name FROM customers ORDER BY name DESC",
    "SELECT name, city FROM customers",
    "SELECT city, name FROM customers",
    "SELECT city FROM customers",
    "SELECT DISTINCT city FROM customers",
    "SELECT customer_id, SUM(total) FROM orders GROUP BY customer_id",
    "SELECT COUNT(*) FROM orders",
    "SELECT 0.1 + 0.2",
    "SELECT 0.3",
    "SELECT NULL, x'00ff', 1e308 * 10",
    "SELECT * FROM orders WHERE total > 1000",
    "SELECT name FROM customer",
    "DELETE FROM orders",
)


def runnable_pairs() -> st.SearchStrategy[gradekit.Sample]:
    """Samples whose output and expected are queries on the shop database, often the same one."""
    query = st.sampled_from(_QUERIES)
    same = query.map(lambda sql: gradekit.Sample(output=sql, expected=sql))
    pairs = st.builds(gradekit.Sample, output=query, expected=query)
    return st.one_of(same, pairs)


class TestExecution(GraderContract):
    kind = "sql.execution"
    configs = ({"database": _SHOP}, {"database": _SHOP, "ordered": True, "tolerance": 0.0})
    sample_strategy = st.one_of(runnable_pairs(), samples(require_expected=True))
    deterministic = True
    picklable = True


def sql_outputs() -> st.SearchStrategy[gradekit.Sample]:
    """Samples whose output is SQL, bare or in prose with fenced blocks, so that sql.valid's
    contract reaches its checks of statements, tables and columns."""
    query = st.sampled_from(
        (
            *_QUERIES,
            "WITH t AS (SELECT city AS name FROM customers) SELECT name FROM t",
            "SELECT c.* FROM customers AS c JOIN orders USING (id)",
            "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders)",
        )
    )
    fenced = st.builds(
        "{}\n```{}\n{}\n```\n{}".format,
        st.text(max_size=20),
        st.sampled_from(("sql", "", "python", "SQL")),
        query,
        st.text(max_size=20),
    )
    return st.builds(gradekit.Sample, output=st.one_of(query, fenced))


class TestValid(GraderContract):
    kind = "sql.valid"
    configs = (
        {},
        {"dialect": "postgres"},
        {"tables": ["customers"], "columns": ["name", "customers.id"], "extract": False},
        {"tables": ["customers", "orders"], "columns": ["name", "customers.id"]},
    )
    sample_strategy = st.one_of(sql_outputs(), samples())
    deterministic = True
    picklable = True


class _BrokenCompare(Execution):
    """sql.execution with a comparison that raises: what TestExecution must catch."""

    def _compare(self, expected: Any, output: Any) -> gradekit.GradeResult:
        raise RuntimeError("broken comparison")


def test_the_contract_samples_reach_the_comparison() -> None:
    registry = gradekit.Registry(entry_points=False)
    registry.register("sql.execution", _BrokenCompare)
    violations = check_grader(
        "sql.execution",
        TestExecution.configs[0],
        samples=TestExecution.sample_strategy,
        registry=registry,
        settings=settings(max_examples=50, derandomize=True),
    )
    broken = [v.message for v in violations if v.rule == "well_formed"]
    assert len(broken) == 1
    assert broken[0].startswith("grade raised RuntimeError: broken comparison (at ")
