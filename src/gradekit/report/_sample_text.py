"""A turn's sample as plain text, for the reports that show it as text (JUnit's
`<system-out>`, the Markdown summary): input, output, expected, the tool calls one a line, the
transcript one message a line. Each part is cut at a bound with a marker saying how much of the
text graded was left out (the JSON report's marker, whose count is added to when the text
comes already cut), so no sample can make a report unreadable."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["SAMPLE_LIMIT", "cut", "sample_parts", "value_text"]

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
