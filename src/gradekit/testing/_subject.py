"""What a contract checks: one kind, one example config, and what was declared about them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import attrs
from hypothesis.strategies import SearchStrategy

from gradekit._types import Grader, Sample
from gradekit.registry.registry import Registry

__all__ = ["CONTRACT_NAME", "Broken", "NotApplicable", "Subject", "canonical_name"]

CONTRACT_NAME: Final = "contract-grader"
"""The name the contract gives the graders it creates (so a factory that ignores its `name`
argument shows)."""


class NotApplicable(Exception):
    """A rule about an ability this grader does not have (no `agrade`, not inline): skipped."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Broken(Exception):
    """A rule found broken before any sample was drawn (the grader does not pickle)."""

    def __init__(self, message: str, example: Any) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


def canonical_name(distribution: str) -> str:
    """A distribution name as packaging compares them: `Acme_Graders` is `acme-graders`."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


@attrs.frozen
class Subject:
    """One kind with one example config, the registry it resolves through, and declarations.

    `factory` is the object the kind must resolve to (None: whatever it resolves to).
    `deterministic` and `picklable` override what the grader declares (its own
    `deterministic` and `picklable` attributes, True when absent).
    """

    kind: str
    config: Mapping[str, Any]
    registry: Registry
    samples: SearchStrategy[Sample]
    factory: Any = None
    deterministic: bool | None = None
    picklable: bool | None = None
    hint: str = ""
    """Said after a rejected example config: where the config came from and how to fix it."""
    sample_outcomes: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    """The outcomes of the rules about grading, by rule name, once searched (together)."""

    def create(self, config: Mapping[str, Any] | None = None) -> Grader:
        """A grader of this kind named CONTRACT_NAME, from `config` (default: the example)."""
        return self.registry.create(
            self.kind, CONTRACT_NAME, self.config if config is None else config
        )

    def is_deterministic(self, grader: Any) -> bool:
        """Whether this grader must give the same result for the same sample."""
        if self.deterministic is not None:
            return self.deterministic
        return getattr(grader, "deterministic", True) is not False

    def is_picklable(self, grader: Any) -> bool:
        """Whether this grader must survive pickling (process isolation needs it)."""
        if self.picklable is not None:
            return self.picklable
        return getattr(grader, "picklable", True) is not False
