"""Reproducible reports: every report of a real run says what made it (gradekit's and Python's
versions, the suite file's hash, the distribution and version behind each kind), and
`gradekit compare` names a kind whose provider changed between two runs."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import sqlite3
from pathlib import Path

import pytest
from cli_support import DATA, Run
from lxml import etree

from gradekit import Sample
from gradekit.history.compare import compare
from gradekit.registry.entries import build_entry
from gradekit.report.reading import read_report
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn

SQL_SUITE = """\
name: shop
graders:
  - kind: sql.execution
    database: shop.sqlite
cases:
  - name: london
    output: "SELECT name FROM customers WHERE city = 'London'"
    expected: "SELECT name FROM customers WHERE city = 'London' ORDER BY name"
  - name: wrong
    output: "SELECT name FROM customers"
    expected: "SELECT name FROM customers WHERE city = 'London'"
    graders:
      - kind: not
        graders: [{kind: contains, values: ["Paris"]}]
"""


def _sql_version() -> str:
    try:
        return importlib.metadata.version("gradekit-sql")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("gradekit-sql is not installed: pip install -e plugins/gradekit-sql")


@pytest.fixture
def sql_suite(tmp_path: Path) -> Path:
    connection = sqlite3.connect(tmp_path / "shop.sqlite")
    with connection:
        connection.execute("CREATE TABLE customers (name TEXT, city TEXT)")
        connection.executemany(
            "INSERT INTO customers VALUES (?, ?)", [("Ada", "London"), ("Grace", "New York")]
        )
    connection.close()
    suite = tmp_path / "suite.yaml"
    suite.write_text(SQL_SUITE, encoding="utf-8")
    return suite


def test_the_json_report_names_the_pack_behind_each_kind(
    gradekit: Run, sql_suite: Path, tmp_path: Path
) -> None:
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--quiet")
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    own = importlib.metadata.version("gradekit")
    assert report["environment"] == {
        "gradekit": own,
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "suite_sha256": hashlib.sha256(sql_suite.read_bytes()).hexdigest(),
        "kinds": {  # the composite's child too
            "contains": {"distribution": "gradekit", "version": own},
            "not": {"distribution": "gradekit", "version": own},
            "sql.execution": {"distribution": "gradekit-sql", "version": _sql_version()},
        },
    }
    back = read_report(tmp_path / "r.json").environment
    assert back is not None
    assert back.to_dict() == report["environment"]


def test_the_suite_hash_follows_the_file(gradekit: Run, sql_suite: Path, tmp_path: Path) -> None:
    gradekit("run", "suite.yaml", "-o", "before.json", "--quiet")
    sql_suite.write_text(SQL_SUITE + "# an edit that changes nothing graded\n", encoding="utf-8")
    gradekit("run", "suite.yaml", "-o", "after.json", "--quiet")
    before, after = (
        json.loads((tmp_path / name).read_text())["environment"]["suite_sha256"]
        for name in ("before.json", "after.json")
    )
    assert before != after
    assert after == hashlib.sha256(sql_suite.read_bytes()).hexdigest()


def test_a_suite_built_in_python_has_no_hash() -> None:
    entry = build_entry({"kind": "equality"})
    suite = Suite(
        "built", lambda: iter([Case("a", (Turn(Sample(output="x", expected="x"), (entry,)),))])
    )
    environment = run_suite(suite).environment
    assert environment is not None
    assert environment.suite_sha256 is None
    assert environment.to_dict()["kinds"] == {
        "equality": {"distribution": "gradekit", "version": importlib.metadata.version("gradekit")}
    }


def test_junit_properties_carry_it_and_stay_valid(
    gradekit: Run, sql_suite: Path, tmp_path: Path
) -> None:
    done = gradekit("run", "suite.yaml", "--junit", "r.xml", "--quiet")
    assert done.returncode == 1, done.stderr
    document = etree.parse(str(tmp_path / "r.xml"))
    for schema in ("jenkins-junit.xsd", "junit.xsd"):
        checker = etree.XMLSchema(etree.parse(str(DATA / schema)))
        assert checker.validate(document), checker.error_log
    properties = {p.get("name"): p.get("value") for p in document.getroot().iter("property")}
    assert properties["gradekit.version"] == importlib.metadata.version("gradekit")
    assert properties["gradekit.suite_sha256"] == hashlib.sha256(sql_suite.read_bytes()).hexdigest()
    assert properties["gradekit.kind.sql.execution"] == f"gradekit-sql {_sql_version()}"


def test_markdown_and_html_show_it(gradekit: Run, sql_suite: Path, tmp_path: Path) -> None:
    gradekit("run", "suite.yaml", "--markdown", "r.md", "--html", "r.html", "--quiet")
    markdown = (tmp_path / "r.md").read_text()
    assert f"gradekit-sql {_sql_version()} (sql.execution)" in markdown
    page = etree.HTML((tmp_path / "r.html").read_text())
    rows = {
        row.findtext("th"): row.findtext("td")
        for row in page.iterfind(".//details[@id='environment']//tr")
    }
    assert rows["kind sql.execution"] == f"gradekit-sql {_sql_version()}"
    assert rows["suite sha256"] == hashlib.sha256(sql_suite.read_bytes()).hexdigest()


def test_compare_notes_a_pack_upgrade(gradekit: Run, sql_suite: Path, tmp_path: Path) -> None:
    gradekit("run", "suite.yaml", "-o", "new.json", "--quiet")
    # The baseline: the same run as an older gradekit-sql would have recorded it.
    base = json.loads((tmp_path / "new.json").read_text())
    base["environment"]["kinds"]["sql.execution"]["version"] = "0.0.1"
    (tmp_path / "base.json").write_text(json.dumps(base))
    done = gradekit("compare", "base.json", "new.json", "--json", "c.json", "--markdown", "c.md")
    assert done.returncode == 0, done.stderr
    change = f"sql.execution: gradekit-sql 0.0.1 -> {_sql_version()}"
    assert f"  {change}\n" in done.stdout
    assert "contains:" not in done.stdout  # unchanged kinds are not listed
    assert f"- `{change}`" in (tmp_path / "c.md").read_text()
    assert json.loads((tmp_path / "c.json").read_text())["kind_changes"] == [
        {
            "kind": "sql.execution",
            "base": {"distribution": "gradekit-sql", "version": "0.0.1"},
            "new": {"distribution": "gradekit-sql", "version": _sql_version()},
        }
    ]

    # A report written before reports had an environment still reads; nothing to note.
    del base["environment"]
    (tmp_path / "old.json").write_text(json.dumps(base))
    assert read_report(tmp_path / "old.json").environment is None
    assert compare(tmp_path / "old.json", tmp_path / "new.json").kind_changes == ()
    done = gradekit("compare", "old.json", "new.json")
    assert done.returncode == 0, done.stderr
    assert "note:" not in done.stdout
