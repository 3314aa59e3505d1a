"""Fixtures for the suite loader tests: an isolated registry with tiny kinds, and a file writer.

The kinds here are real graders registered on a `Registry(entry_points=False)`, so these tests
do not depend on which built-in kinds exist; `test_suite_builtins.py` uses the real ones.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from suite_kinds import CREATED, Exact, Near, boom, counted, loose

from gradekit import Registry


@pytest.fixture
def registry() -> Registry:
    """An isolated registry with the test kinds."""
    registry = Registry(entry_points=False)
    registry.register("exact", Exact)
    registry.register("near", Near)
    registry.register("loose", loose)
    registry.register("boom", boom)
    registry.register("counted", counted)
    CREATED.clear()
    return registry


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """`write(text, name="suite.yaml")`: write dedented text into tmp_path, return the path."""

    def write(text: str, name: str = "suite.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write


@pytest.fixture
def created(registry: Registry) -> list[str]:
    """Names of the `counted` graders created so far (cleared for each test)."""
    return CREATED
