"""The installed distribution: its kinds are found through entry points and load lazily."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import gradekit
from gradekit.registry.registry import default_registry


def test_the_kinds_come_from_this_distribution() -> None:
    infos = {info.kind: info for info in default_registry.describe()}
    assert infos["sql.execution"].distribution == "gradekit-sql"
    assert infos["sql.execution"].value == "gradekit_sql.execution:Execution"
    assert infos["sql.valid"].value == "gradekit_sql.valid:Valid"
    assert {"sql.execution", "sql.valid"} <= set(gradekit.kinds())


def test_each_factory_has_example_configs_that_create_graders() -> None:
    for kind in ("sql.execution", "sql.valid"):
        factory = default_registry.factory(kind)
        assert isinstance(factory.examples, tuple) and factory.examples
        for config in factory.examples:
            assert gradekit.create(kind, config=config).kind == kind


def test_sqlglot_is_imported_only_by_the_kind_that_parses() -> None:
    code = textwrap.dedent(
        """
        import sys, gradekit
        gradekit.create("sql.execution", config={"database": "x.sqlite"})
        print("sqlglot" in sys.modules)
        gradekit.create("sql.valid")
        print("sqlglot" in sys.modules)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"]
