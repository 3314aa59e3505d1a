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

import json
from collections.abc import Mapping
from typing import Any, Final

import attrs

from gradekit._errors import Problem
from gradekit._hints import hint_suffix
from gradekit._types import ToolCall
from gradekit.suite.parse import describe, json_error

__all__ = ["FORMATS", "TranscriptTurn", "transcript_turns"]

Path = tuple[Any, ...]

FORMATS: Final = ("openai-chat", "openai-responses", "anthropic")
"""The transcript formats read, in the order one is chosen when several fit."""
CHAT: Final = "openai-chat"
RESPONSES: Final = "openai-responses"
ANTHROPIC: Final = "anthropic"

ROLES: Final = ("system", "developer", "user", "assistant", "tool")
"""The roles of a Chat Completions message (and `function`, its legacy tool result)."""
_ROLES: Final = {
    CHAT: frozenset({*ROLES, "function"}),
    RESPONSES: frozenset({"system", "developer", "user", "assistant"}),
    ANTHROPIC: frozenset({"system", "user", "assistant"}),
}
_TEXT_PARTS: Final = {
    CHAT: frozenset({"text", "refusal"}),
    RESPONSES: frozenset({"input_text", "output_text", "refusal", "summary_text"}),
    ANTHROPIC: frozenset({"text"}),
}
"""Content parts whose text is the message's text."""
_MEDIA_PARTS: Final = {
    CHAT: frozenset({"image_url", "input_audio", "file"}),
    RESPONSES: frozenset({"input_image", "input_file", "input_audio"}),
    ANTHROPIC: frozenset(
        {"image", "document", "search_result", "thinking", "redacted_thinking", "container_upload"}
    ),
}
"""Content parts that carry no text and no tool call: kept with the message, not read."""


def _anthropic_call_block(block_type: Any) -> bool:
    """A block calling a tool: `tool_use`, and a server's or an MCP server's (`*_tool_use`)."""
    return isinstance(block_type, str) and block_type.endswith("tool_use")


def _anthropic_result_block(block_type: Any) -> bool:
    """A block answering a call: `tool_result`, and a server tool's (`web_search_tool_result`)."""
    return isinstance(block_type, str) and block_type.endswith("tool_result")


_PART_TYPES: Final = {fmt: _TEXT_PARTS[fmt] | _MEDIA_PARTS[fmt] for fmt in FORMATS}
"""Content parts a message's text is read from (tool blocks are read apart)."""

_HOSTED_CALLS: Final = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "computer_call": "computer",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "local_shell_call": "local_shell",
}
"""Responses items of the provider's own tools, and the tool name each call is graded by."""
_RESPONSES_RESULTS: Final = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "local_shell_call_output",
    }
)
_RESPONSES_CALLS: Final = frozenset(
    {"function_call", "custom_tool_call", "mcp_call", *_HOSTED_CALLS}
)


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


@attrs.frozen
class _Call:
    """A tool call as read: its id (None when nothing answers it by id), name, decoded
    arguments, and for calls that carry them, their result or error; `legacy` for a Chat
    `function_call`, which a `function` message answers by name."""

    id: str | None
    name: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None
    legacy: bool = False


@attrs.frozen
class _Result:
    """A tool result: the id of the call it answers (or the call's name, legacy Chat)."""

    path: Path
    id: str | None
    text: Any
    error: bool = False
    name: str | None = None


@attrs.frozen
class _Step:
    """What one message says, in the rule set's terms: `role` is system, user, assistant,
    result or item."""

    role: str
    path: Path
    text: str | None = None
    calls: tuple[_Call, ...] = ()
    result: _Result | None = None
    item: Any = None


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
        system = _text(messages.get("system"), ANTHROPIC, (*path[:-1], "system"), problems)
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


def _shapes(message: Any) -> frozenset[str]:
    """The formats `message` can be read in."""
    if not isinstance(message, dict):
        return frozenset()
    kind = message.get("type")
    if kind is not None and kind != "message":
        return frozenset({RESPONSES}) if isinstance(kind, str) else frozenset()
    role = message.get("role")
    fits = {fmt for fmt in FORMATS if role in _ROLES[fmt]}
    if kind == "message":
        fits.discard(CHAT)
    if any(message.get(key) is not None for key in ("tool_calls", "function_call", "tool_call_id")):
        fits &= {CHAT}
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            part_type = part.get("type") if isinstance(part, dict) else None
            fits = {fmt for fmt in fits if _holds(fmt, part_type)}
    return frozenset(fits)


def _holds(fmt: str, part_type: Any) -> bool:
    """Whether a message of format `fmt` may hold a content part of `part_type`."""
    if part_type in _PART_TYPES[fmt]:
        return True
    return fmt == ANTHROPIC and (
        _anthropic_call_block(part_type) or _anthropic_result_block(part_type)
    )


def _format(
    messages: list[Any], path: Path, forced: str | None, problems: list[Problem]
) -> str | None:
    """The one format every message fits (the forced one when given), or None with the
    problems that say why not."""
    shapes = [_shapes(message) for message in messages]
    if forced is not None:
        for index, fits in enumerate(shapes):
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
    for fits in shapes:
        if fits:
            common &= fits
    if common:
        return next(fmt for fmt in FORMATS if fmt in common)
    described = [
        f"message {index}: {' or '.join(fmt for fmt in FORMATS if fmt in fits)}"
        for index, fits in enumerate(shapes)
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
    read = _READERS[fmt]
    for index, message in enumerate(messages):
        where = (*path, index)
        known = len(problems)
        steps = read(message, where, problems)
        if len(problems) == known and fmt not in _shapes(message):
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
    fits = _shapes(message)
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


def _record(call: _Call) -> dict[str, Any]:
    record: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.result is not None:
        record["result"] = call.result
    if call.error is not None:
        record["error"] = call.error
    return record


def _answer(
    result: _Result,
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


def _unmatched(result: _Result) -> str:
    key = result.path[-1]
    if key == "tool_call_id":
        return (
            f"no earlier assistant tool call has id {result.id!r}; a tool message answers "
            "a call of the assistant message before it"
        )
    return f"no earlier tool call has id {result.id!r}; a tool result answers an earlier call"


def _text(content: Any, fmt: str, path: Path, problems: list[Problem]) -> str | None:
    """A message's text: a string, or its text parts joined by newlines. A part of a type
    the format does not have is a problem; media parts carry no text."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for index, part in enumerate(content):
            part_type = part.get("type") if isinstance(part, dict) else None
            if part_type in _TEXT_PARTS[fmt]:
                text = part.get("text", part.get("refusal"))
                if isinstance(text, str):
                    texts.append(text)
                    continue
                problems.append(
                    Problem((*path, index), f"a {part_type} part needs its text, got {part!r}")
                )
            elif part_type not in _PART_TYPES[fmt]:
                problems.append(Problem((*path, index), _unknown_part(part, fmt)))
        return "\n".join(texts)
    problems.append(Problem(path, f"expected a string or a list of content parts, got {content!r}"))
    return None


def _unknown_part(part: Any, fmt: str) -> str:
    read = ", ".join(sorted(_PART_TYPES[fmt]))
    return (
        f"gradekit does not read this content part as {fmt}: {describe(part)}; it reads "
        f"parts of type {read} (a tool call or its result in another form would be lost)"
    )


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


def _role_problem(message: Any, where: Path, fmt: str, problems: list[Problem]) -> bool:
    """Add the problem of a message that is not a mapping with one of the format's roles."""
    role = message.get("role") if isinstance(message, dict) else None
    if isinstance(message, dict) and role in _ROLES[fmt]:
        return False
    roles = ROLES if fmt == CHAT else tuple(sorted(_ROLES[fmt]))
    suffix = hint_suffix(role, roles) if isinstance(role, str) else ""
    problems.append(
        Problem(
            (*where, "role") if isinstance(message, dict) else where,
            f"a message needs a role: {', '.join(roles)}; got {role!r}{suffix}",
        )
    )
    return True


def _chat(message: Any, where: Path, problems: list[Problem]) -> list[_Step]:
    """A Chat Completions message, legacy `function_call` and `function` role included."""
    if _role_problem(message, where, CHAT, problems):
        return []
    role = message["role"]
    text = _text(message.get("content"), CHAT, (*where, "content"), problems)
    if role in ("system", "developer"):
        return [_Step("system", where, text)]
    if role == "user":
        return [_Step("user", where, text)]
    if role == "tool":
        call_id = message.get("tool_call_id")
        return [_Step("result", where, result=_Result((*where, "tool_call_id"), call_id, text))]
    if role == "function":
        name = message.get("name")
        if not isinstance(name, str):
            problems.append(
                Problem(where, "a function message needs the 'name' of the call it answers")
            )
            return []
        return [_Step("result", where, result=_Result(where, None, text, name=name))]
    if message.get("refusal") and not text:
        text = message["refusal"]
    calls = _chat_calls(message, where, problems)
    return [_Step("assistant", where, text, calls=tuple(calls))]


def _chat_calls(message: Mapping[str, Any], where: Path, problems: list[Problem]) -> list[_Call]:
    calls: list[_Call] = []
    legacy = message.get("function_call")
    if legacy is not None:
        name = legacy.get("name") if isinstance(legacy, dict) else None
        if not isinstance(name, str):
            problems.append(
                Problem(
                    (*where, "function_call"),
                    f"a function_call needs a 'name' and 'arguments', got {legacy!r}",
                )
            )
        else:
            arguments = _arguments(
                legacy.get("arguments"), (*where, "function_call", "arguments"), problems
            )
            calls.append(_Call(None, name, arguments, legacy=True))
    listed = message.get("tool_calls")
    if listed is None:
        return calls
    if not isinstance(listed, list):
        problems.append(Problem((*where, "tool_calls"), f"expected a list, got {listed!r}"))
        return calls
    for index, call in enumerate(listed):
        at = (*where, "tool_calls", index)
        call_id = call.get("id") if isinstance(call, dict) else None
        call_id = call_id if isinstance(call_id, str) else None
        custom = call.get("custom") if isinstance(call, dict) else None
        if isinstance(custom, dict) and isinstance(custom.get("name"), str):
            calls.append(_Call(call_id, custom["name"], {"input": custom.get("input")}))
            continue
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str):
            problems.append(
                Problem(
                    at,
                    f"a tool call needs 'function' with a 'name' and 'arguments', got {call!r}",
                )
            )
            continue
        arguments = _arguments(function.get("arguments"), (*at, "function", "arguments"), problems)
        calls.append(_Call(call_id, name, arguments))
    return calls


def _anthropic(message: Any, where: Path, problems: list[Problem]) -> list[_Step]:
    """An Anthropic message: text, tool_use and tool_result blocks (server and MCP tools'
    too). A user message of tool results only continues the turn."""
    if _role_problem(message, where, ANTHROPIC, problems):
        return []
    role = message["role"]
    content = message.get("content")
    at = (*where, "content")
    if role == "system" or not isinstance(content, list):
        return [_Step(role, where, _text(content, ANTHROPIC, at, problems))]
    steps: list[_Step] = []
    calls: list[_Call] = []
    texts: list[Any] = []
    for index, block in enumerate(content):
        block_type = block.get("type") if isinstance(block, dict) else None
        if _anthropic_call_block(block_type):
            call = _anthropic_call(block, (*at, index), problems)
            if call is not None:
                calls.append(call)
        elif _anthropic_result_block(block_type):
            steps.append(_anthropic_result(block, (*at, index), problems))
        else:
            texts.append(block)
    text = _text(texts, ANTHROPIC, at, problems) if texts else None
    if role == "user":
        if text or not steps:
            steps.append(_Step("user", where, text or ""))
        return steps
    return [*steps, _Step("assistant", where, text, calls=tuple(calls))]


def _anthropic_call(block: Mapping[str, Any], at: Path, problems: list[Problem]) -> _Call | None:
    name, call_id, given = block.get("name"), block.get("id"), block.get("input", {})
    if not isinstance(name, str) or not isinstance(call_id, str) or not isinstance(given, dict):
        problems.append(
            Problem(
                at,
                f"a {block.get('type')} block needs an 'id', a 'name' and an 'input' mapping, "
                f"got {block!r}",
            )
        )
        return None
    return _Call(call_id, name, dict(given))


def _anthropic_result(block: Mapping[str, Any], at: Path, problems: list[Problem]) -> _Step:
    content = block.get("content")
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") in _PART_TYPES[ANTHROPIC] for part in content
    ):
        text: Any = _text(content, ANTHROPIC, (*at, "content"), problems)
    else:
        text = content  # a server tool's own result object, kept as it is
    failed = block.get("is_error") is True
    result = _Result((*at, "tool_use_id"), block.get("tool_use_id"), text, error=failed)
    return _Step("result", at, result=result)


def _responses(item: Any, where: Path, problems: list[Problem]) -> list[_Step]:
    """A Responses item: a message, a call of a function, a custom, MCP or hosted tool, a
    call's output, or another item (kept in the turn's metadata)."""
    kind = item.get("type", "message") if isinstance(item, dict) else None
    if kind == "message":
        if _role_problem(item, where, RESPONSES, problems):
            return []
        role = item["role"]
        text = _text(item.get("content"), RESPONSES, (*where, "content"), problems)
        return [_Step("system" if role in ("system", "developer") else role, where, text)]
    if kind in _RESPONSES_CALLS:
        call = _responses_call(item, kind, where, problems)
        return [] if call is None else [_Step("assistant", where, calls=(call,))]
    if kind in _RESPONSES_RESULTS:
        output = item.get("output")
        if isinstance(output, list):
            output = _text(output, RESPONSES, (*where, "output"), problems)
        call_id = item.get("call_id")
        return [_Step("result", where, result=_Result((*where, "call_id"), call_id, output))]
    if isinstance(kind, str):
        return [_Step("item", where, item=item)]
    problems.append(Problem(where, f"a Responses item needs a 'type', got {describe(item)}"))
    return []


def _responses_call(
    item: Mapping[str, Any], kind: str, where: Path, problems: list[Problem]
) -> _Call | None:
    call_id = item.get("call_id", item.get("id"))
    call_id = call_id if isinstance(call_id, str) else None
    if kind in _HOSTED_CALLS:
        action = item.get("action")
        arguments = dict(action) if isinstance(action, dict) else {}
        for key in ("queries", "code"):
            if key in item:
                arguments[key] = item[key]
        return _Call(call_id, _HOSTED_CALLS[kind], arguments)
    name = item.get("name")
    if not isinstance(name, str):
        problems.append(Problem(where, f"a {kind} item needs a 'name', got {describe(item)}"))
        return None
    if kind == "custom_tool_call":
        return _Call(call_id, name, {"input": item.get("input")})
    arguments = _arguments(item.get("arguments"), (*where, "arguments"), problems)
    if kind == "mcp_call":
        error = item.get("error")
        return _Call(
            None,  # an MCP call carries its own output
            name,
            arguments,
            result=item.get("output"),
            error=error if isinstance(error, str) else None,
        )
    return _Call(call_id, name, arguments)


_READERS: Final = {CHAT: _chat, RESPONSES: _responses, ANTHROPIC: _anthropic}
