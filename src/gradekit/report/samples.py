"""What a report shows of the data it graded: each turn's sample (`input`, `output`,
`expected`, `tool_calls`, a transcript's `messages`) and each case's `metadata`, as strict
JSON with long texts cut.

The runner attaches a `SampleForm` holding the frozen values it graded (no copy); the JSON is
built only when the report is written (`to_dict`), so a run that keeps its reports pays one
small object per turn, and a run that keeps none builds nothing. Texts longer than the bound
(`max_text` bytes of UTF-8) are cut and end with a marker saying how much was cut; values JSON
cannot hold are shown as their repr.

A turn's sample as plain text, for the reports that show it as text (JUnit's
`<system-out>`, the Markdown summary): input, output, expected, the tool calls one a line, the
transcript one message a line. Each part is cut at a bound with a marker saying how much of the
text graded was left out (the JSON report's marker, whose count is added to when the text
comes already cut), so no sample can make a report unreadable.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from gradekit.core.types import FrozenDict, Sample, ToolCall

__all__ = [
    "MAX_TEXT",
    "SAMPLE_LIMIT",
    "SampleForm",
    "cut",
    "cut_text",
    "json_value",
    "sample_json",
    "sample_lines",
    "sample_parts",
    "tool_call_json",
    "value_text",
]


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


SAMPLE_LIMIT = 4000
"""At most this many characters of each part of a sample."""


_MARKER = re.compile(r"…\[cut (\d{1,3}(?:,\d{3})*) more characters\]")
"""The marker `samples.cut_text` ends a cut text with: the reports are often built from a JSON
report whose texts are already cut."""


def cut(text: str, limit: int = SAMPLE_LIMIT) -> str:
    """`text`, or its first `limit` characters and the marker of the JSON report,
    `…[cut 12,345 more characters]`, counting the characters missing from the text graded:
    where `text` holds markers of its own (texts already cut in the JSON report), the count of
    each marker left out is added instead of the marker's length, and a marker is never split."""
    if len(text) <= limit:
        return text
    end, missing = limit, 0
    for marker in _MARKER.finditer(text):
        if marker.end() <= end:
            continue  # kept whole, its own count still right
        end = min(end, marker.start())
        missing += int(marker[1].replace(",", "")) - len(marker[0])
    missing += len(text) - end
    return f"{text[:end]}…[cut {missing:,} more characters]"


def value_text(value: Any) -> str:
    """A text as it is; any other value as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _tool_call(number: int, call: Any) -> str:
    if not isinstance(call, Mapping):
        return f"{number}. {value_text(call)}"
    line = f"{number}. {value_text(call.get('name', '?'))}"
    arguments = call.get("arguments")
    line += f" {value_text(arguments)}" if arguments not in (None, {}) else ""
    if call.get("result") is not None:
        line += f" -> {value_text(call['result'])}"
    if call.get("error") is not None:
        line += f" error: {value_text(call['error'])}"
    return line


def _message(message: Any) -> str:
    if not isinstance(message, Mapping):
        return value_text(message)
    content = message.get("content")
    if isinstance(content, Sequence) and not isinstance(content, str):
        content = "\n".join(
            part["text"]
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
            else value_text(part)
            for part in content
        )
    text = "" if content is None else value_text(content)
    calls = message.get("tool_calls")
    if isinstance(calls, Sequence) and calls:
        named = [
            value_text(call.get("function", {}).get("name", "?"))
            if isinstance(call, Mapping)
            else value_text(call)
            for call in calls
        ]
        text += ("\n" if text else "") + "calls " + ", ".join(named)
    return f"{value_text(message.get('role', '?'))}: {text}"


def sample_parts(sample: Mapping[str, Any], limit: int = SAMPLE_LIMIT) -> list[tuple[str, str]]:
    """`(label, text)` for each part of a turn's sample (see `CaseReport.turn_samples`)."""
    parts: list[tuple[str, str]] = []
    for key in ("input", "output", "expected"):
        if key in sample:
            parts.append((key, cut(value_text(sample[key]), limit)))
    calls = sample.get("tool_calls")
    if isinstance(calls, Sequence) and not isinstance(calls, str) and calls:
        lines = "\n".join(_tool_call(number, call) for number, call in enumerate(calls, 1))
        parts.append(("tool calls", cut(lines, limit)))
    messages = sample.get("messages")
    if isinstance(messages, Sequence) and not isinstance(messages, str) and messages:
        parts.append(("messages", cut("\n".join(_message(m) for m in messages), limit)))
    return parts


def sample_lines(sample: Mapping[str, Any], limit: int = SAMPLE_LIMIT) -> list[str]:
    """A turn's sample as indented text lines (`  output: 42`; a part of several lines as a
    block under its label), for the reports and messages that show it as text."""
    lines = []
    for label, text in sample_parts(sample, limit):
        if "\n" in text:  # a block: each line indented under its label
            lines.append(f"  {label}:\n    " + text.replace("\n", "\n    "))
        else:
            lines.append(f"  {label}: {text}")
    return lines
