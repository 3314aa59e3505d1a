"""What the judge sees of a sample: the sections `include` asks for, as plain text.

`input`, `output` and `expected` are the sample's values (structured values as JSON);
`tool_calls` the calls as JSON; `messages` the conversation up to this turn; `files` the
workspace's text files, each cut at `per_file` bytes and all of them at `total` bytes (binary
files and what does not fit are listed by name only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from gradekit import Sample
from gradekit._frozen import thaw
from gradekit._types import ToolCall, as_text
from gradekit.graders._patterns import walk, workspace_error

__all__ = ["INCLUDABLE", "FileLimits", "Includable", "Section", "sections"]

Includable = Literal["input", "output", "expected", "tool_calls", "messages", "files"]
INCLUDABLE: Final = ("input", "output", "expected", "tool_calls", "messages", "files")

TITLES: Final[Mapping[str, str]] = {
    "input": "INPUT",
    "output": "OUTPUT",
    "expected": "EXPECTED",
    "tool_calls": "TOOL CALLS",
    "messages": "CONVERSATION",
}

LISTED_AT_MOST: Final = 50
"""Files named in FILES NOT SHOWN; the rest are counted (a build folder holds thousands)."""


@attrs.frozen
class Section:
    """One delimited part of the prompt: `title` names it (`OUTPUT`, `FILE "app.py"`)."""

    title: str
    text: str


@attrs.frozen
class FileLimits:
    """Bytes of one file, and of all files together, shown to the judge."""

    per_file: int = 20_000
    total: int = 100_000


def sections(sample: Sample, include: Sequence[str], limits: FileLimits) -> list[Section]:
    """The sections of `sample` in the order of `include`. `expected` and `input` are left out
    when the sample has none. ValueError (an error text) when files are asked for and the
    sample has no workspace."""
    found: list[Section] = []
    for part in include:
        if part == "files":
            found.extend(_files(sample, limits))
        elif part == "tool_calls":
            found.append(Section(TITLES[part], _json([_call(c) for c in sample.tool_calls])))
        elif part == "messages":
            found.append(Section(TITLES[part], _conversation(sample)))
        elif part == "output":
            found.append(Section(TITLES[part], _render(sample.output)))
        else:
            value = sample.input if part == "input" else sample.expected
            if value is not None:
                found.append(Section(TITLES[part], _render(value)))
    return found


def _render(value: Any) -> str:
    if isinstance(value, (Mapping, tuple, list)):
        return _json(thaw(value))
    return as_text(value)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _call(call: ToolCall) -> dict[str, Any]:
    data: dict[str, Any] = {"name": call.name, "arguments": thaw(call.arguments)}
    if call.result is not None:
        data["result"] = thaw(call.result)
    if call.error is not None:
        data["error"] = call.error
    return data


def _conversation(sample: Sample) -> str:
    lines: list[str] = []
    system = sample.metadata.get("system")
    if isinstance(system, str):
        lines.append(f"system: {system}")
    for turn in (*sample.history, sample):
        if turn.input is not None:
            lines.append(f"user: {_render(turn.input)}")
        lines.extend(
            f"assistant called {call.name}: {_json(_call(call))}" for call in turn.tool_calls
        )
        if turn.output is not None:
            lines.append(f"assistant: {_render(turn.output)}")
    return "\n".join(lines)


def _files(sample: Sample, limits: FileLimits) -> list[Section]:
    problem = workspace_error(sample)
    if problem is not None or sample.workspace is None:
        raise ValueError((problem or "no workspace").split(": ", 1)[-1])
    shown: list[Section] = []
    left_out: list[str] = []
    budget = limits.total
    for file in walk(Path(sample.workspace)):
        if budget <= 0:
            left_out.append(f"{file.path} (the files' size limit was reached)")
            continue
        text, cut = _read_text(file.absolute, min(limits.per_file, budget))
        if text is None:
            left_out.append(f"{file.path} (not UTF-8 text)")
            continue
        budget -= len(text.encode())
        note = "\n[... the rest of this file is not shown]" if cut else ""
        shown.append(Section(f"FILE {json.dumps(file.path)}", text + note))
    if left_out:
        listed = left_out[:LISTED_AT_MOST]
        if len(left_out) > LISTED_AT_MOST:
            listed.append(f"... and {len(left_out) - LISTED_AT_MOST} more files not shown")
        shown.append(Section("FILES NOT SHOWN", "\n".join(listed)))
    return shown


def _read_text(path: Path, limit: int) -> tuple[str | None, bool]:
    """The file's text cut at `limit` bytes (and whether it was cut), or None for a file that
    is not UTF-8 text or cannot be read."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None, False
    cut = len(data) > limit
    data = data[:limit]
    if b"\0" in data:
        return None, cut
    try:
        return data.decode("utf-8"), cut
    except UnicodeDecodeError as error:
        # A cut may fall inside the last character: that is still a text file.
        if cut and error.start >= len(data) - 3:
            return data[: error.start].decode("utf-8", errors="replace"), cut
        return None, cut
