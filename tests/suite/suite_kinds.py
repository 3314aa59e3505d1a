"""Tiny grader kinds for the suite loader tests (imported by conftest and the tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from gradekit import GradeResult, Sample


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


# The suite example of DESIGN.md, verbatim.
DESIGN_EXAMPLE = """
name: convfinqa-smoke
policy: all
graders:
  - kind: numeric
    absolute_tolerance: 0.01
    accept_percent: true
cases:
  - name: growth
    graders: []
    turns:
      - input: "What was the growth rate?"
        output: "14.14%"
        expected: "0.14136"
        tool_calls: [{name: calculator, arguments: {expr: "a/b"}}]
        graders:
          - kind: code
            grader: "my_benchmarks:numeric_equal"
dataset: runs/agent-outputs.jsonl
"""
