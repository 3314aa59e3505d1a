"""A broken contract rule, and how its falsifying example is shown to a person."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from gradekit._types import Sample, ToolCall

__all__ = ["Violation", "show"]

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
