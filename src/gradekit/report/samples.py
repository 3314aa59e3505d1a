"""What a report shows of the data it graded: each turn's sample (`input`, `output`,
`expected`, `tool_calls`, a transcript's `messages`) and each case's `metadata`, as strict
JSON with long texts cut.

The runner attaches a `SampleForm` holding the frozen values it graded (no copy); the JSON is
built only when the report is written (`to_dict`), so a run that keeps its reports pays one
small object per turn, and a run that keeps none builds nothing. Texts longer than the bound
(`max_text` bytes of UTF-8) are cut and end with a marker saying how much was cut; values JSON
cannot hold are shown as their repr.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from gradekit.core.types import FrozenDict, Sample, ToolCall

__all__ = ["MAX_TEXT", "SampleForm", "cut_text", "json_value", "sample_json", "tool_call_json"]

MAX_TEXT: Final = 4096
"""The default bound of each text, in bytes of UTF-8."""

_SAMPLE_KEYS: Final = ("input", "output", "expected")
SAMPLE_KEYS: Final = (*_SAMPLE_KEYS, "tool_calls", "messages")
"""Every key of a turn's sample in its JSON form."""


def cut_text(text: str, max_text: int) -> str:
    """`text`, or its first `max_text` bytes (of UTF-8, whole characters) and a marker
    saying how many characters were cut: `…[cut 12,345 more characters]`."""
    if len(text) * 4 <= max_text:  # no character takes more than 4 bytes
        return text
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_text:
        return text
    kept = encoded[:max_text].decode("utf-8", "ignore")
    return f"{kept}…[cut {len(text) - len(kept):,} more characters]"


def json_value(value: Any, max_text: int) -> Any:
    """`value` as strict JSON: mappings and sequences as objects and arrays, texts cut at
    `max_text`, whatever else JSON cannot hold (NaN, bytes, objects) as its repr."""
    kind = type(value)
    if kind is str:
        return cut_text(value, max_text)
    if value is None or kind is bool or kind is int:
        return value
    if kind is float:
        return value if math.isfinite(value) else repr(value)
    # The usual containers by their type first: the ABC check costs more than the rest.
    if kind is FrozenDict or kind is dict:
        return _json_object(value, max_text)
    if kind is tuple or kind is list:
        return [json_value(item, max_text) for item in value]
    if isinstance(value, Mapping):
        return _json_object(value, max_text)
    if isinstance(value, (tuple, list)):
        return [json_value(item, max_text) for item in value]
    return cut_text(repr(value), max_text)


def _json_object(value: Mapping[Any, Any], max_text: int) -> dict[str, Any]:
    return {
        key if type(key) is str else repr(key): json_value(item, max_text)
        for key, item in value.items()
    }


def sample_json(sample: Sample, messages: Any, max_text: int) -> dict[str, Any]:
    """The JSON form of a turn's sample (with its transcript `messages`, if any): the keys
    that hold something, texts cut at `max_text`."""
    data: dict[str, Any] = {}
    # The keys of _SAMPLE_KEYS, one by one: this runs once per turn written.
    value = sample.input
    if value is not None:
        data["input"] = json_value(value, max_text)
    value = sample.output
    if value is not None:
        data["output"] = json_value(value, max_text)
    value = sample.expected
    if value is not None:
        data["expected"] = json_value(value, max_text)
    if sample.tool_calls:
        data["tool_calls"] = [tool_call_json(call, max_text) for call in sample.tool_calls]
    if messages is not None:
        data["messages"] = json_value(messages, max_text)
    return data


def tool_call_json(call: ToolCall, max_text: int) -> dict[str, Any]:
    """A tool call's JSON form in a turn's sample (texts cut at `max_text`)."""
    return {
        "name": cut_text(call.name, max_text),
        "arguments": json_value(call.arguments, max_text),
        "result": json_value(call.result, max_text),
        "error": None if call.error is None else cut_text(call.error, max_text),
        "turn": call.turn,
    }


class SampleForm:
    """A report's view of graded data, turned into its JSON form on demand (`to_dict`).

    `source` is a turn's `Sample` (with the transcript `messages` of that turn, if any), a
    case's metadata mapping, or, when `max_text` is None, a JSON form read back from a report
    (shown as it is)."""

    __slots__ = ("_max_text", "_messages", "_source")

    def __init__(
        self,
        source: Sample | Mapping[str, Any],
        messages: tuple[Any, ...] | None = None,
        max_text: int | None = MAX_TEXT,
    ) -> None:
        self._source = source
        self._messages = messages
        self._max_text = max_text

    @classmethod
    def of_turn_data(cls, data: Mapping[str, Any]) -> SampleForm | None:
        """The sample keys of a turn's JSON form (read back from a report or log), if any."""
        found = {key: data[key] for key in SAMPLE_KEYS if key in data}
        return cls.read(found) if found else None

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> SampleForm:
        """The form of JSON read back from a report (already cut)."""
        return cls(data, None, None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: a sample's keys that hold something, or the metadata."""
        source, bound = self._source, self._max_text
        if bound is None:
            return dict(source)  # type: ignore[arg-type]  # a JSON mapping read back
        if not isinstance(source, Sample):
            return json_value(source, bound)  # type: ignore[no-any-return]
        return sample_json(source, self._messages, bound)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SampleForm):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # equal by a rendered, mutable form

    def __repr__(self) -> str:
        return f"SampleForm({self.to_dict()!r})"
