"""Grader kinds that keep gradekit's contract: an attrs class, and a plain factory with agrade.

Installed for real (pip install) by the kit's tests, which check that the contract finds
nothing to report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from gradekit import ConfigError, GradeResult, Problem, Sample


@attrs.frozen
class Shout:
    """Passes an upper-case output (its text, for other values)."""

    kind: ClassVar[str] = "acme.shout"
    inline: ClassVar[bool] = True
    examples: ClassVar[tuple[dict[str, Any], ...]] = ({}, {"min_length": 3})
    name: str = attrs.field(kw_only=True, default="acme.shout")
    min_length: int = attrs.field(kw_only=True, default=0)

    def grade(self, sample: Sample) -> GradeResult:
        text = "" if sample.output is None else str(sample.output)
        ok = text.isupper() and len(text) >= self.min_length
        return GradeResult(self.kind, self.name, ok, float(ok), f"{len(text)} characters")


@attrs.frozen
class LengthOptions:
    """The options of acme.length."""

    name: str = attrs.field(kw_only=True, default="acme.length")
    limit: int = attrs.field(kw_only=True, default=100)


class Length:
    """Passes an output of at most `limit` characters; scores limit / length beyond it."""

    kind = "acme.length"

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit

    def grade(self, sample: Sample) -> GradeResult:
        size = len("" if sample.output is None else str(sample.output))
        score = 1.0 if size <= self.limit else self.limit / size
        return GradeResult(self.kind, self.name, size <= self.limit, score, f"{size} characters")

    async def agrade(self, sample: Sample) -> GradeResult:
        return self.grade(sample)


def length(name: str, config: Mapping[str, Any]) -> Length:
    """A plain factory that checks its options itself, as the contract asks."""
    problems = [
        Problem((str(key),), f"unknown option '{key}' for kind 'acme.length'", key=True)
        for key in config
        if key != "limit"
    ]
    limit = config.get("limit", 100)
    if isinstance(limit, bool) or not isinstance(limit, int):
        problems.append(Problem(("limit",), f"expected a whole number, got {limit!r}"))
    if problems:
        raise ConfigError("invalid options for kind 'acme.length'", problems)
    return Length(name, limit)


length.examples = ({}, {"limit": 5})  # type: ignore[attr-defined]
length.options_class = LengthOptions  # type: ignore[attr-defined]
