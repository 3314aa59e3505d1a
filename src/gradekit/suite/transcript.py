"""Turns from a transcript (`messages:`) in the format an agent saved it: an OpenAI Chat
Completions transcript, a list of OpenAI Responses items, or an Anthropic Messages transcript.

The format is found from the messages' shapes (`messages_format` forces one); each message is
read into steps (a system text, a user text, an assistant text with its tool calls, a tool
result, another item), and one rule set makes the turns: each user text starts a turn and is
its `input`; the last text the assistant wrote before the next user text is its `output`; the
tool calls the assistant made in between are its `tool_calls` (arguments decoded from JSON
text, results matched by call id, `turn` set to the turn's index); a system text is kept in the
metadata of the turns after it (`system`). A message that only answers tool calls (an
Anthropic user message of `tool_result` blocks, a Chat `tool` message, a Responses
`function_call_output`) continues the turn.

Nothing is dropped silently: a tool call or content in a form gradekit does not read is a
problem at its position, and Responses items that are neither messages nor tool calls
(reasoning, ...) are kept in the turn's metadata as `items`.
"""

from __future__ import annotations

from typing import Any

import attrs

from gradekit.core.errors import Problem, hint_suffix
from gradekit.core.types import ToolCall
from gradekit.suite.model import describe
from gradekit.suite.transcript_formats import (
    ANTHROPIC,
    CHAT,
    FORMATS,
    PART_TYPES,
    READERS,
    RESPONSES,
    ROLES_BY_FORMAT,
    Call,
    Result,
    is_call_block,
    is_result_block,
    text_of,
)

__all__ = ["FORMATS", "TranscriptTurn", "transcript_turns"]

Path = tuple[Any, ...]


@attrs.define
class TranscriptTurn:
    """One turn derived from a transcript; `path` is the path of the user message, `messages`
    the turn's messages as written (the first turn's start with those before it), `items`
    the Responses items that are neither messages nor tool calls (reasoning, ...)."""

    path: Path
    input: Any
    output: Any = None
    system: str | None = None
    calls: list[dict[str, Any]] = attrs.field(factory=list)
    messages: list[Any] = attrs.field(factory=list)
    items: list[Any] = attrs.field(factory=list)

    def tool_calls(self, turn: int) -> tuple[ToolCall, ...]:
        """The turn's calls as ToolCalls with `turn` set."""
        return tuple(ToolCall(turn=turn, **call) for call in self.calls)

    def metadata(self) -> dict[str, Any]:
        """What the turn adds to its sample's metadata: `system` and `items`, when given."""
        found: dict[str, Any] = {}
        if self.system is not None:
            found["system"] = self.system
        if self.items:
            found["items"] = list(self.items)
        return found


def transcript_turns(
    messages: Any, path: Path, format: Any = None, format_path: Path | None = None
) -> tuple[list[TranscriptTurn], list[Problem]]:
    """The turns of the transcript `messages` (found at `path`), and every problem in it.

    `format` is the case's `messages_format` (None: found from the messages' shapes), found
    at `format_path`. An Anthropic request body (`{system: ..., messages: [...]}`) is read as
    an Anthropic transcript with its system text.
    """
    problems: list[Problem] = []
    if format is not None and format not in FORMATS:
        problems.append(
            Problem(
                format_path or path,
                f"messages_format must be one of {', '.join(FORMATS)}, got {describe(format)}"
                + (hint_suffix(format, FORMATS) if isinstance(format, str) else ""),
            )
        )
        return [], problems
    system: str | None = None
    if isinstance(messages, dict) and "messages" in messages:
        path = (*path, "messages")
        system = text_of(messages.get("system"), ANTHROPIC, (*path[:-1], "system"), problems)
        format = format or ANTHROPIC
        messages = messages["messages"]
    if not isinstance(messages, list) or not messages:
        problems.append(
            Problem(path, f"expected a non-empty list of chat messages, got {messages!r}")
        )
        return [], problems
    chosen = _format(messages, path, format, problems)
    if chosen is None:
        return [], problems
    return _turns(messages, path, chosen, system, problems), problems


def shapes(message: Any) -> frozenset[str]:
    """The formats `message` can be read in."""
    if not isinstance(message, dict):
        return frozenset()
    kind = message.get("type")
    if kind is not None and kind != "message":
        return frozenset({RESPONSES}) if isinstance(kind, str) else frozenset()
    role = message.get("role")
    fits = {fmt for fmt in FORMATS if role in ROLES_BY_FORMAT[fmt]}
    if kind == "message":
        fits.discard(CHAT)
    if any(message.get(key) is not None for key in ("tool_calls", "function_call", "tool_call_id")):
        fits &= {CHAT}
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            part_type = part.get("type") if isinstance(part, dict) else None
            fits = {fmt for fmt in fits if holds(fmt, part_type)}
    return frozenset(fits)


def holds(fmt: str, part_type: Any) -> bool:
    """Whether a message of format `fmt` may hold a content part of `part_type`."""
    if part_type in PART_TYPES[fmt]:
        return True
    return fmt == ANTHROPIC and (is_call_block(part_type) or is_result_block(part_type))


def _format(
    messages: list[Any], path: Path, forced: str | None, problems: list[Problem]
) -> str | None:
    """The one format every message fits (the forced one when given), or None with the
    problems that say why not."""
    found = [shapes(message) for message in messages]
    if forced is not None:
        for index, fits in enumerate(found):
            if forced not in fits and fits:
                looks = " or ".join(fmt for fmt in FORMATS if fmt in fits)
                problems.append(
                    Problem(
                        (*path, index),
                        f"this message does not read as {forced} (messages_format): it looks "
                        f"like {looks}; give the transcript in one format",
                    )
                )
        # A message that fits no format gets its own problem from the reader.
        return None if problems else forced
    common = set(FORMATS)
    for fits in found:
        if fits:
            common &= fits
    if common:
        return next(fmt for fmt in FORMATS if fmt in common)
    described = [
        f"message {index}: {' or '.join(fmt for fmt in FORMATS if fmt in fits)}"
        for index, fits in enumerate(found)
        if fits and fits != set(FORMATS)
    ]
    problems.append(
        Problem(
            path,
            "the transcript mixes formats (" + "; ".join(described) + "); give it in one "
            "format: openai-chat, openai-responses or anthropic (messages_format forces one)",
        )
    )
    return None


def _turns(
    messages: list[Any], path: Path, fmt: str, system: str | None, problems: list[Problem]
) -> list[TranscriptTurn]:
    """The one rule set over the steps every message is read into."""
    turns: list[TranscriptTurn] = []
    pending: dict[str, dict[str, Any]] = {}
    legacy: list[dict[str, Any]] = []  # Chat `function_call`s, answered by name
    items: list[Any] = []  # items before the first turn
    read = READERS[fmt]
    for index, message in enumerate(messages):
        where = (*path, index)
        known = len(problems)
        steps = read(message, where, problems)
        if len(problems) == known and fmt not in shapes(message):
            problems.append(Problem(where, _foreign(message, fmt)))
            continue
        for step in steps:
            if step.role == "system":
                system = step.text
            elif step.role == "user":
                before = [] if turns else list(messages[:index])
                turns.append(TranscriptTurn(where, step.text, system=system, messages=before))
                turns[-1].items.extend(items)
                items.clear()
            elif step.role == "item":
                (turns[-1].items if turns else items).append(step.item)
            elif not turns:
                problems.append(
                    Problem(
                        step.path,
                        f"a message with role '{_role(message)}' before the first user "
                        "message; each turn of a transcript starts with a user message",
                    )
                )
                break
            elif step.role == "assistant":
                if step.text:
                    turns[-1].output = step.text
                for call in step.calls:
                    record = _record(call)
                    turns[-1].calls.append(record)
                    if call.legacy:
                        legacy.append(record)
                    elif call.id is not None:
                        pending[call.id] = record
            elif step.result is not None:
                _answer(step.result, pending, legacy, problems)
        if turns and steps:
            turns[-1].messages.append(message)
    if not turns and not problems:
        problems.append(Problem(path, "the transcript has no user message; add one"))
    return turns


def _foreign(message: Any, fmt: str) -> str:
    """Why a message the reader took is not of the transcript's format (a key or a block of
    another format's, which the reader would have left unread)."""
    fits = shapes(message)
    looks = (
        f"it looks like {' or '.join(other for other in FORMATS if other in fits)}"
        if fits
        else "it mixes the keys or blocks of several formats"
    )
    return (
        f"this message does not read as {fmt}, the format of the rest of the transcript: "
        f"{looks}; give the transcript in one format (messages_format forces one)"
    )


def _role(message: Any) -> str:
    role = message.get("role") if isinstance(message, dict) else None
    if isinstance(role, str):
        return role
    kind = message.get("type") if isinstance(message, dict) else None
    return str(kind)


def _record(call: Call) -> dict[str, Any]:
    record: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.result is not None:
        record["result"] = call.result
    if call.error is not None:
        record["error"] = call.error
    return record


def _answer(
    result: Result,
    pending: dict[str, dict[str, Any]],
    legacy: list[dict[str, Any]],
    problems: list[Problem],
) -> None:
    """Give `result` to the call it answers: by id, or a legacy call by name."""
    if result.name is not None:
        record = next((call for call in reversed(legacy) if call["name"] == result.name), None)
        if record is None:
            problems.append(
                Problem(
                    (*result.path, "name"),
                    f"no earlier assistant function_call is named {result.name!r}; a function "
                    "message answers the function_call of the assistant message before it",
                )
            )
            return
        legacy.remove(record)
    else:
        found = pending.get(result.id) if result.id is not None else None
        if found is None:
            problems.append(Problem(result.path, _unmatched(result)))
            return
        record = found
    if result.error:
        record["error"] = "" if result.text is None else str(result.text)
    else:
        record["result"] = result.text


def _unmatched(result: Result) -> str:
    key = result.path[-1]
    if key == "tool_call_id":
        return (
            f"no earlier assistant tool call has id {result.id!r}; a tool message answers "
            "a call of the assistant message before it"
        )
    return f"no earlier tool call has id {result.id!r}; a tool result answers an earlier call"
