"""Turns from an OpenAI chat transcript (`messages:`), the way agent traces are usually saved.

Each `user` message starts a turn: its text is the turn's `input`, the last text the assistant
wrote before the next user message is its `output`, and the tool calls the assistant made in
between are its `tool_calls` (arguments decoded from their JSON strings, results matched from
`tool` messages by `tool_call_id`, `turn` set to the turn's index). A `system` (or
`developer`) message's text is kept in the metadata of the turns after it, as `system`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import attrs

from gradekit._errors import Problem
from gradekit._hints import hint_suffix
from gradekit._types import ToolCall
from gradekit.suite.parse import json_error

__all__ = ["TranscriptTurn", "transcript_turns"]

Path = tuple[Any, ...]
ROLES: Final = ("system", "developer", "user", "assistant", "tool")


@attrs.define
class TranscriptTurn:
    """One turn derived from a transcript; `path` is the path of the user message, `messages`
    the turn's messages as written (the first turn's start with those before it)."""

    path: Path
    input: Any
    output: Any = None
    system: str | None = None
    calls: list[dict[str, Any]] = attrs.field(factory=list)
    messages: list[Any] = attrs.field(factory=list)

    def tool_calls(self, turn: int) -> tuple[ToolCall, ...]:
        """The turn's calls as ToolCalls with `turn` set."""
        return tuple(ToolCall(turn=turn, **call) for call in self.calls)


def _text(content: Any, path: Path, problems: list[Problem]) -> str | None:
    """A message's text: a string, or the `text` parts of a content list joined by newlines."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        return "\n".join(parts)
    problems.append(
        Problem(
            (*path, "content"),
            f"expected a string or a list of content parts, got {content!r}",
        )
    )
    return None


def _arguments(value: Any, path: Path, problems: list[Problem]) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    if value is None or value == "":
        return {}
    if not isinstance(value, str):
        problems.append(Problem(path, f"expected a JSON object encoded as a string, got {value!r}"))
        return {}
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError as error:
        problems.append(
            Problem(
                path,
                f"invalid JSON in tool call arguments: {json_error(error)}; "
                "arguments must be a JSON object encoded as a string",
            )
        )
        return {}
    if not isinstance(decoded, dict):
        problems.append(Problem(path, f"tool call arguments must be a JSON object, got {value!r}"))
        return {}
    return decoded


def _calls(
    message: Mapping[str, Any],
    path: Path,
    turn: TranscriptTurn,
    pending: dict[str, dict[str, Any]],
    problems: list[Problem],
) -> None:
    calls = message.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        problems.append(Problem((*path, "tool_calls"), f"expected a list, got {calls!r}"))
        return
    for index, call in enumerate(calls):
        where = (*path, "tool_calls", index)
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str):
            problems.append(
                Problem(
                    where,
                    f"a tool call needs 'function' with a 'name' and 'arguments', got {call!r}",
                )
            )
            continue
        arguments = _arguments(
            function.get("arguments"), (*where, "function", "arguments"), problems
        )
        record: dict[str, Any] = {"name": name, "arguments": arguments}
        turn.calls.append(record)
        call_id = call.get("id")
        if isinstance(call_id, str):
            pending[call_id] = record


def _result(
    message: Mapping[str, Any],
    path: Path,
    pending: dict[str, dict[str, Any]],
    problems: list[Problem],
) -> None:
    call_id = message.get("tool_call_id")
    record = pending.get(call_id) if isinstance(call_id, str) else None
    if record is None:
        problems.append(
            Problem(
                (*path, "tool_call_id"),
                f"no earlier assistant tool call has id {call_id!r}; a tool message answers "
                "a call of the assistant message before it",
            )
        )
        return
    record["result"] = _text(message.get("content"), path, problems)


def transcript_turns(messages: Any, path: Path) -> tuple[list[TranscriptTurn], list[Problem]]:
    """The turns of the transcript `messages` (found at `path`), and every problem in it."""
    problems: list[Problem] = []
    if not isinstance(messages, list) or not messages:
        problems.append(
            Problem(path, f"expected a non-empty list of chat messages, got {messages!r}")
        )
        return [], problems
    turns: list[TranscriptTurn] = []
    pending: dict[str, dict[str, Any]] = {}
    system: str | None = None
    for index, message in enumerate(messages):
        where = (*path, index)
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(message, dict) or role not in ROLES:
            suffix = hint_suffix(role, ROLES) if isinstance(role, str) else ""
            problems.append(
                Problem(
                    (*where, "role") if isinstance(message, dict) else where,
                    f"a message needs a role: {', '.join(ROLES)}; got {role!r}{suffix}",
                )
            )
            continue
        text = _text(message.get("content"), where, problems)
        if role == "user":
            before = [] if turns else list(messages[:index])
            turns.append(TranscriptTurn(where, text, system=system, messages=before))
        if turns:
            turns[-1].messages.append(message)
        if role in ("system", "developer"):
            system = text
        elif role == "user":
            continue
        elif not turns:
            problems.append(
                Problem(
                    where,
                    f"a message with role '{role}' before the first user message; each turn "
                    "of a transcript starts with a user message",
                )
            )
        elif role == "assistant":
            if text:
                turns[-1].output = text
            _calls(message, where, turns[-1], pending, problems)
        else:
            _result(message, where, pending, problems)
    if not turns and not problems:
        problems.append(Problem(path, "the transcript has no user message; add one"))
    return turns, problems
