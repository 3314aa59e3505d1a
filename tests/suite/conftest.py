"""Fixtures for the suite loader tests: an isolated registry with tiny kinds, and a file writer.

The kinds here are real graders registered on a `Registry(entry_points=False)`, so these tests
do not depend on which built-in kinds exist; `test_suite_builtins.py` uses the real ones.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

import attrs
import pytest

from gradekit import GradeResult, Registry, Sample


@attrs.frozen
class Exact:
    """Passes when the output equals the expected value."""

    kind: ClassVar[str] = "exact"
    name: str = attrs.field(kw_only=True, default="exact")
    ignore_case: bool = attrs.field(
        kw_only=True, default=False, metadata={"help": "Compare case-insensitively."}
    )
    mode: Literal["text", "json"] = attrs.field(kw_only=True, default="text")

    def grade(self, sample: Sample) -> GradeResult:
        """Compare output and expected as text."""
        got, want = str(sample.output), str(sample.expected)
        if self.ignore_case:
            got, want = got.lower(), want.lower()
        return GradeResult(self.kind, self.name, got == want, float(got == want))


@attrs.frozen
class Near:
    """Passes when the output is within `tolerance` of the expected number."""

    kind: ClassVar[str] = "near"
    name: str = attrs.field(kw_only=True, default="near")
    tolerance: float = attrs.field(kw_only=True)
    units: list[str] = attrs.field(kw_only=True, factory=list)

    def grade(self, sample: Sample) -> GradeResult:
        """Compare as numbers."""
        ok = abs(float(sample.output) - float(sample.expected)) <= self.tolerance
        return GradeResult(self.kind, self.name, ok, float(ok))


class Loose:
    """A plain-function factory: it accepts any options."""

    kind = "loose"

    def __init__(self, name: str, config: Mapping[str, Any]) -> None:
        self.name = name
        self.config = dict(config)

    def grade(self, sample: Sample) -> GradeResult:
        """Always passes."""
        return GradeResult(self.kind, self.name, True, 1.0)


def loose(name: str, config: Mapping[str, Any]) -> Loose:
    """Factory of the `loose` kind."""
    return Loose(name, config)


def boom(name: str, config: Mapping[str, Any]) -> Loose:
    """A factory that fails the way a careless third-party factory might."""
    raise RuntimeError(f"boom with {dict(config)}")


CREATED: list[str] = []


def counted(name: str, config: Mapping[str, Any]) -> Loose:
    """A factory that records each creation, to see what a dataset costs."""
    CREATED.append(name)
    return Loose(name, config)


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
