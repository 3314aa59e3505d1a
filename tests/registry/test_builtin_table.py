"""gradekit's own kinds are read from a table in code; it must say what the pyproject says."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from gradekit.registry.plugins import BUILTIN_KINDS

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_table_equals_the_entry_points_in_pyproject():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the next test covers 3.10
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["entry-points"]
    assert dict(BUILTIN_KINDS) == declared["gradekit.graders"]


def test_the_table_equals_the_installed_entry_points():
    installed = importlib.metadata.distribution("gradekit").entry_points
    declared = {ep.name: ep.value for ep in installed.select(group="gradekit.graders")}
    assert dict(BUILTIN_KINDS) == declared


def test_every_entry_of_the_table_names_a_factory():
    for value in BUILTIN_KINDS.values():
        module, _, attribute = value.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute)), value
