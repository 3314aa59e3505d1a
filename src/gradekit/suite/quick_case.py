"""The usual dataset line built straight into its Case, without the full case checks.

Most lines of a dataset are one single-turn case with plain values: a name, `input`, `output`
and `expected` scalars, a list of simple tool calls, a flat `metadata` mapping. For such a line
every check `CaseBuilder.build` makes passes by construction, so `quick_case` builds the same
Case directly (about twice as fast). Anything else (another key, another type, a suite without
graders) returns None and the caller takes the full path, so every error message stays the
full path's own. tests/suite/test_suite_quick_case.py holds the two paths equal.
"""

from __future__ import annotations

from typing import Any, Final

from gradekit._frozen import EMPTY, FrozenDict
from gradekit._types import ToolCall, loaded_sample
from gradekit.suite.cases import CaseBuilder
from gradekit.suite.model import Case, Turn

__all__ = ["quick_case"]

LINE_KEYS: Final = frozenset({"name", "input", "output", "expected", "tool_calls", "metadata"})
CALL_KEYS: Final = frozenset({"name", "arguments", "result", "error", "turn"})
SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def quick_case(builder: CaseBuilder, raw: dict[str, Any], name: str, location: str) -> Case | None:
    """The Case `builder.build` makes of the dataset line `raw`, or None when the line is not
    of the usual shape (the caller then builds it the full way)."""
    if not builder.suite_entries or not LINE_KEYS.issuperset(raw):
        return None  # no suite graders: the full path says whether the case is ungraded
    get = raw.get
    given, output, expected = get("input"), get("output"), get("expected")
    if not (type(given) in SCALARS and type(output) in SCALARS and type(expected) in SCALARS):
        return None
    if "name" in raw and raw["name"] != name:  # an empty or non-text name: its error
        return None
    calls = _calls(get("tool_calls"))
    if calls is None:
        return None
    metadata = _flat(get("metadata"))
    if metadata is None:
        return None
    sample = loaded_sample(name, 0, given, output, expected, calls, None, (), None, metadata)
    return Case(
        name,
        (Turn(sample, builder.suite_entries),),
        location=location,
        metadata=metadata,
        tags=builder.suite_tags,
    )


def _calls(value: Any) -> tuple[ToolCall, ...] | None:
    """The tool calls of a list of plain ones (a text name, flat scalar arguments, a scalar
    result, a text error, a whole turn), or None for anything else."""
    if value is None:
        return ()
    if type(value) is not list:
        return None
    calls = []
    for call in value:
        if type(call) is not dict or not CALL_KEYS.issuperset(call):
            return None
        name, arguments, result = call.get("name"), call.get("arguments"), call.get("result")
        error, turn = call.get("error"), call.get("turn")
        if not (
            type(name) is str
            and type(result) in SCALARS
            and (error is None or type(error) is str)
            and (turn is None or type(turn) is int)
        ):
            return None
        flat = _flat(arguments)
        if flat is None:
            return None
        calls.append(ToolCall(name, flat, result, error, turn))
    return tuple(calls)


def _flat(value: Any) -> FrozenDict[str, Any] | None:
    """A missing or flat mapping of scalars, frozen (EMPTY for none); None for anything else."""
    if value is None or value == {}:
        return EMPTY
    if type(value) is dict and all(type(item) in SCALARS for item in value.values()):
        return FrozenDict(value)
    return None
