"""What a contract checks and what it finds: the subject (one kind, one example config, and
what was declared about them), and a broken rule (`Violation`) with its falsifying example as
it is shown to a person (`show`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import attrs
from hypothesis.strategies import SearchStrategy

from gradekit.core.types import Grader, Sample, ToolCall
from gradekit.registry.registry import Registry

__all__ = [
    "CONTRACT_NAME",
    "Broken",
    "NotApplicable",
    "Subject",
    "Violation",
    "canonical_name",
    "show",
]


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


_LONG: Final = 200


@attrs.frozen
class Violation:
    """One contract rule that a kind breaks, with the example that shows it.

    `kind` is the kind checked, `rule` the rule's name (such as `deterministic`), `message`
    what went wrong, and `example` the falsifying example: the (shrunk) Sample hypothesis
    found for the rules about grading, the options for the rules about options, the kind's
    name for the rules about the kind itself. `config` is the example config the grader was
    created with (None for the rules about the kind).
    """

    kind: str
    rule: str
    message: str
    example: Any
    config: Mapping[str, Any] | None = None

    def __str__(self) -> str:
        lines = [f"{self.kind}: {self.rule}: {self.message}"]
        if self.config is not None:
            lines.append(f"  config: {show(dict(self.config))}")
        lines.append(f"  Falsifying example: {show(self.example)}")
        return "\n".join(lines)


def _non_default_fields(value: Any) -> str:
    shown = []
    for field in attrs.fields(type(value)):
        item = getattr(value, field.name)
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory()
        if item is default or (type(item) is type(default) and item == default):
            continue
        shown.append(f"{field.name}={show(item)}")
    return f"{type(value).__name__}({', '.join(shown)})"


def show(value: Any) -> str:
    """A readable repr: Samples and ToolCalls list only the fields that are not defaults, and
    texts longer than a couple of hundred characters are cut, with their length."""
    if isinstance(value, (Sample, ToolCall)):
        return _non_default_fields(value)
    if isinstance(value, str):
        if len(value) <= _LONG:
            return repr(value)
        return f"{value[:_LONG]!r}... ({len(value)} characters)"
    if isinstance(value, Mapping):
        items = ", ".join(f"{show(key)}: {show(item)}" for key, item in value.items())
        return "{" + items + "}"
    if isinstance(value, tuple):
        inner = ", ".join(show(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(show(item) for item in value) + "]"
    return repr(value)
