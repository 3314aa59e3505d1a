"""The grader packs shipped beside gradekit (plugins/), installed and used through the CLI.

The fast tests use the packs installed in this venv (the README's test command installs
them); the slow one installs gradekit and both packs into a fresh venv, as a user would.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from cli_support import REPO, Run

PACKS = ("gradekit-sql", "gradekit-similarity")

SUITE = """
    name: packs
    cases:
      - name: sql right
        output: "SELECT name FROM customers WHERE city = 'London'"
        expected: "SELECT name FROM customers WHERE id IN (1, 3)"
        graders:
          - {kind: sql.valid}
          - {kind: sql.execution, database: dbs/shop.sqlite}
      - name: sql wrong
        output: "SELECT name FROM customers"
        expected: "SELECT name FROM customers WHERE id IN (1, 3)"
        graders: [{kind: sql.execution, database: dbs/shop.sqlite}]
      - name: sql writes
        output: "DELETE FROM customers"
        graders: [{kind: sql.valid}]
      - name: text close
        output: "The cat sat on the mat."
        expected: ["A cat sat on the mat.", "There is a cat on the mat."]
        graders:
          - {kind: similarity.levenshtein, threshold: 0.8}
          - {kind: similarity.rouge_l, threshold: 0.8}
          - {kind: similarity.bleu, threshold: 0.5}
          - {kind: similarity.chrf, threshold: 0.6}
          - {kind: similarity.token_f1, threshold: 0.8}
      - name: text far
        output: "Dogs bark at night."
        expected: "The cat sat on the mat."
        graders: [{kind: similarity.rouge_l, threshold: 0.5}]
"""

EXPECTED = {
    "sql right": [("sql.valid", "pass"), ("sql.execution", "pass")],
    "sql wrong": [("sql.execution", "fail")],
    "sql writes": [("sql.valid", "fail")],
    "text close": [
        ("similarity.levenshtein", "pass"),
        ("similarity.rouge_l", "pass"),
        ("similarity.bleu", "pass"),
        ("similarity.chrf", "pass"),
        ("similarity.token_f1", "pass"),
    ],
    "text far": [("similarity.rouge_l", "fail")],
}


def _installed() -> list[str]:
    missing = []
    for name in PACKS:
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    return missing


needs_packs = pytest.mark.skipif(
    bool(_installed()),
    reason=(
        f"not installed in this venv: {', '.join(_installed())}; install the packs with: "
        "pip install -e plugins/gradekit-sql -e plugins/gradekit-similarity"
    ),
)


def _write_suite(root: Path) -> Path:
    """The suite and its SQLite database under `root/suite/`; returns the suite file."""
    folder = root / "suite"
    (folder / "dbs").mkdir(parents=True)
    connection = sqlite3.connect(folder / "dbs" / "shop.sqlite")
    with connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
        connection.executemany(
            "INSERT INTO customers VALUES (?, ?, ?)",
            [(1, "Ada", "London"), (2, "Grace", "New York"), (3, "Alan", "London")],
        )
    connection.close()
    suite = folder / "suite.yaml"
    suite.write_text(textwrap.dedent(SUITE).lstrip(), encoding="utf-8")
    return suite


def _outcomes(report: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    outcomes = {}
    for case in report["cases"]:
        results = case["turns"][0]["results"]
        outcomes[case["name"]] = [(result["kind"], _outcome(result)) for result in results]
    return outcomes


def _outcome(result: dict[str, Any]) -> str:
    if result["error"] is not None:
        return "error"
    return "pass" if result["passed"] else "fail"


def _check_report(proc: subprocess.CompletedProcess[str], report_path: Path) -> None:
    assert proc.returncode == 1, proc.stderr  # some cases fail
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert _outcomes(report) == EXPECTED
    assert report["summary"]["cases"] == 5
    assert report["summary"]["passed"] == 2
    assert report["summary"]["errored"] == 0


@needs_packs
def test_kinds_lists_the_packs_under_their_namespace_and_distribution(gradekit: Run) -> None:
    listed = gradekit("kinds", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["kind"]: row for row in json.loads(listed.stdout)}
    sql = {kind for kind, row in rows.items() if row["distribution"] == "gradekit-sql"}
    similarity = {
        kind for kind, row in rows.items() if row["distribution"] == "gradekit-similarity"
    }
    assert sql == {"sql.execution", "sql.valid"}
    assert similarity == {
        "similarity.levenshtein",
        "similarity.rouge_l",
        "similarity.bleu",
        "similarity.chrf",
        "similarity.token_f1",
    }
    assert all(rows[kind]["error"] is None for kind in sql | similarity)
    table = gradekit("kinds")
    line = next(line for line in table.stdout.splitlines() if "sql.execution" in line)
    assert "gradekit-sql" in line
    assert "gradekit_sql.execution:Execution" in line


@needs_packs
def test_a_suite_using_both_packs_runs_through_gradekit_run(gradekit: Run, tmp_path: Path) -> None:
    suite = _write_suite(tmp_path)
    # Run from another folder: the database path resolves against the suite's folder.
    proc = gradekit("run", str(suite), "-o", "report.json", cwd=tmp_path)
    _check_report(proc, tmp_path / "report.json")


def _copy_sources(target: Path) -> Path:
    """gradekit's sources without the build debris of this checkout (pip builds in place)."""
    ignored = shutil.ignore_patterns(
        ".venv",
        ".git",
        "*.egg-info",
        "__pycache__",
        "build",
        "dist",
        "reports",
        ".*_cache",
        ".hypothesis",
    )
    shutil.copytree(REPO, target, ignore=ignored)
    return target


@pytest.mark.slow
def test_packs_installed_into_a_fresh_venv_grade_a_suite(tmp_path: Path) -> None:
    sources = _copy_sources(tmp_path / "gradekit")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "--quiet",
            str(sources),
            str(sources / "plugins" / "gradekit-sql"),
            str(sources / "plugins" / "gradekit-similarity"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr
    suite = _write_suite(tmp_path)
    proc = subprocess.run(
        [str(venv / "bin" / "gradekit"), "run", str(suite), "-o", "report.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    _check_report(proc, tmp_path / "report.json")
