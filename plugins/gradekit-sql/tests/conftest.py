"""A small shop database made for each test, and a helper to grade one answer on it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradekit
import pytest

CUSTOMERS = [
    (1, "Ada", "London"),
    (2, "Grace", "New York"),
    (3, "Alan", "London"),
    (4, "Edsger", "Amsterdam"),
]
ORDERS = [
    (1, 1, 10.10),
    (2, 1, 20.20),
    (3, 2, 30.30),
    (4, 3, 0.1),
    (5, 3, 0.2),
    (6, 4, 99.99),
]


def make_shop(path: Path) -> Path:
    """Write the shop database (customers, orders) to `path`."""
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
        connection.execute(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL)"
        )
        connection.executemany("INSERT INTO customers VALUES (?, ?, ?)", CUSTOMERS)
        connection.executemany("INSERT INTO orders VALUES (?, ?, ?)", ORDERS)
    connection.close()
    return path


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The shop database, fresh for each test."""
    return make_shop(tmp_path / "shop.sqlite")


Grade = Callable[..., gradekit.GradeResult]


@pytest.fixture
def grade(shop: Path) -> Grade:
    """`grade(output, expected, **options)`: one sql.execution grade on the shop database."""

    def run(output: Any, expected: Any, **options: Any) -> gradekit.GradeResult:
        config = {"database": str(shop), **options}
        grader = gradekit.create("sql.execution", config=config)
        return grader.grade(gradekit.Sample(output=output, expected=expected))

    return run
