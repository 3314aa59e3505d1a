"""How each transcript format's messages are read: into steps of one shape (`Step`: a system
text, a user text, an assistant text with its tool calls, a tool result, another item), which
`gradekit.suite.transcript` makes turns of by one rule set.

`READERS[format]` reads one message, adding a problem at its position for anything it cannot
read: a part or block of a type the format does not have, a call without a name, arguments
that are not a JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import attrs

from gradekit.core.errors import Problem, hint_suffix
from gradekit.suite.model import describe, json_error

__all__ = [
    "ANTHROPIC",
    "CHAT",
    "FORMATS",
    "PART_TYPES",
    "READERS",
    "RESPONSES",
    "ROLES",
    "ROLES_BY_FORMAT",
    "Call",
    "Result",
    "Step",
    "is_call_block",
    "is_result_block",
    "text_of",
]

Path = tuple[Any, ...]

FORMATS: Final = ("openai-chat", "openai-responses", "anthropic")
"""The transcript formats read, in the order one is chosen when several fit."""
CHAT: Final = "openai-chat"
RESPONSES: Final = "openai-responses"
ANTHROPIC: Final = "anthropic"

ROLES: Final = ("system", "developer", "user", "assistant", "tool")
"""The roles of a Chat Completions message (and `function`, its legacy tool result)."""
ROLES_BY_FORMAT: Final = {
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


def is_call_block(block_type: Any) -> bool:
    """A block calling a tool: `tool_use`, and a server's or an MCP server's (`*_tool_use`)."""
    return isinstance(block_type, str) and block_type.endswith("tool_use")


def is_result_block(block_type: Any) -> bool:
    """A block answering a call: `tool_result`, and a server tool's (`web_search_tool_result`)."""
    return isinstance(block_type, str) and block_type.endswith("tool_result")


PART_TYPES: Final = {fmt: _TEXT_PARTS[fmt] | _MEDIA_PARTS[fmt] for fmt in FORMATS}
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
    f"{call}_output"
    for call in ("function_call", "custom_tool_call", "computer_call", "local_shell_call")
)
_RESPONSES_CALLS: Final = frozenset(
    {"function_call", "custom_tool_call", "mcp_call", *_HOSTED_CALLS}
)


@attrs.frozen
class Call:
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
class Result:
    """A tool result: the id of the call it answers (or the call's name, legacy Chat)."""

    path: Path
    id: str | None
    text: Any
    error: bool = False
    name: str | None = None


@attrs.frozen
class Step:
    """What one message says, in the rule set's terms: `role` is system, user, assistant,
    result or item."""

    role: str
    path: Path
    text: str | None = None
    calls: tuple[Call, ...] = ()
    result: Result | None = None
    item: Any = None


def text_of(content: Any, fmt: str, path: Path, problems: list[Problem]) -> str | None:
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
            elif part_type not in PART_TYPES[fmt]:
                problems.append(Problem((*path, index), _unknown_part(part, fmt)))
        return "\n".join(texts)
    problems.append(Problem(path, f"expected a string or a list of content parts, got {content!r}"))
    return None


def _unknown_part(part: Any, fmt: str) -> str:
    read = ", ".join(sorted(PART_TYPES[fmt]))
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
    if isinstance(message, dict) and role in ROLES_BY_FORMAT[fmt]:
        return False
    roles = ROLES if fmt == CHAT else tuple(sorted(ROLES_BY_FORMAT[fmt]))
    suffix = hint_suffix(role, roles) if isinstance(role, str) else ""
    problems.append(
        Problem(
            (*where, "role") if isinstance(message, dict) else where,
            f"a message needs a role: {', '.join(roles)}; got {role!r}{suffix}",
        )
    )
    return True


def _chat(message: Any, where: Path, problems: list[Problem]) -> list[Step]:
    """A Chat Completions message, legacy `function_call` and `function` role included."""
    if _role_problem(message, where, CHAT, problems):
        return []
    role = message["role"]
    text = text_of(message.get("content"), CHAT, (*where, "content"), problems)
    if role in ("system", "developer"):
        return [Step("system", where, text)]
    if role == "user":
        return [Step("user", where, text)]
    if role == "tool":
        call_id = message.get("tool_call_id")
        return [Step("result", where, result=Result((*where, "tool_call_id"), call_id, text))]
    if role == "function":
        name = message.get("name")
        if not isinstance(name, str):
            problems.append(
                Problem(where, "a function message needs the 'name' of the call it answers")
            )
            return []
        return [Step("result", where, result=Result(where, None, text, name=name))]
    if message.get("refusal") and not text:
        text = message["refusal"]
    calls = _chat_calls(message, where, problems)
    return [Step("assistant", where, text, calls=tuple(calls))]


def _chat_calls(message: Mapping[str, Any], where: Path, problems: list[Problem]) -> list[Call]:
    calls: list[Call] = []
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
            calls.append(Call(None, name, arguments, legacy=True))
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
            calls.append(Call(call_id, custom["name"], {"input": custom.get("input")}))
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
        calls.append(Call(call_id, name, arguments))
    return calls


def _anthropic(message: Any, where: Path, problems: list[Problem]) -> list[Step]:
    """An Anthropic message: text, tool_use and tool_result blocks (server and MCP tools'
    too). A user message of tool results only continues the turn."""
    if _role_problem(message, where, ANTHROPIC, problems):
        return []
    role = message["role"]
    content = message.get("content")
    at = (*where, "content")
    if role == "system" or not isinstance(content, list):
        return [Step(role, where, text_of(content, ANTHROPIC, at, problems))]
    steps: list[Step] = []
    calls: list[Call] = []
    texts: list[Any] = []
    for index, block in enumerate(content):
        block_type = block.get("type") if isinstance(block, dict) else None
        if is_call_block(block_type):
            call = _anthropic_call(block, (*at, index), problems)
            if call is not None:
                calls.append(call)
        elif is_result_block(block_type):
            steps.append(_anthropic_result(block, (*at, index), problems))
        else:
            texts.append(block)
    text = text_of(texts, ANTHROPIC, at, problems) if texts else None
    if role == "user":
        if text or not steps:
            steps.append(Step("user", where, text or ""))
        return steps
    return [*steps, Step("assistant", where, text, calls=tuple(calls))]


def _anthropic_call(block: Mapping[str, Any], at: Path, problems: list[Problem]) -> Call | None:
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
    return Call(call_id, name, dict(given))


def _anthropic_result(block: Mapping[str, Any], at: Path, problems: list[Problem]) -> Step:
    content = block.get("content")
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") in PART_TYPES[ANTHROPIC] for part in content
    ):
        text: Any = text_of(content, ANTHROPIC, (*at, "content"), problems)
    else:
        text = content  # a server tool's own result object, kept as it is
    failed = block.get("is_error") is True
    result = Result((*at, "tool_use_id"), block.get("tool_use_id"), text, error=failed)
    return Step("result", at, result=result)


def _responses(item: Any, where: Path, problems: list[Problem]) -> list[Step]:
    """A Responses item: a message, a call of a function, a custom, MCP or hosted tool, a
    call's output, or another item (kept in the turn's metadata)."""
    kind = item.get("type", "message") if isinstance(item, dict) else None
    if kind == "message":
        if _role_problem(item, where, RESPONSES, problems):
            return []
        role = item["role"]
        text = text_of(item.get("content"), RESPONSES, (*where, "content"), problems)
        return [Step("system" if role in ("system", "developer") else role, where, text)]
    if kind in _RESPONSES_CALLS:
        call = _responses_call(item, kind, where, problems)
        return [] if call is None else [Step("assistant", where, calls=(call,))]
    if kind in _RESPONSES_RESULTS:
        output = item.get("output")
        if isinstance(output, list):
            output = text_of(output, RESPONSES, (*where, "output"), problems)
        call_id = item.get("call_id")
        return [Step("result", where, result=Result((*where, "call_id"), call_id, output))]
    if isinstance(kind, str):
        return [Step("item", where, item=item)]
    problems.append(Problem(where, f"a Responses item needs a 'type', got {describe(item)}"))
    return []


def _responses_call(
    item: Mapping[str, Any], kind: str, where: Path, problems: list[Problem]
) -> Call | None:
    call_id = item.get("call_id", item.get("id"))
    call_id = call_id if isinstance(call_id, str) else None
    if kind in _HOSTED_CALLS:
        action = item.get("action")
        arguments = dict(action) if isinstance(action, dict) else {}
        for key in ("queries", "code"):
            if key in item:
                arguments[key] = item[key]
        return Call(call_id, _HOSTED_CALLS[kind], arguments)
    name = item.get("name")
    if not isinstance(name, str):
        problems.append(Problem(where, f"a {kind} item needs a 'name', got {describe(item)}"))
        return None
    if kind == "custom_tool_call":
        return Call(call_id, name, {"input": item.get("input")})
    arguments = _arguments(item.get("arguments"), (*where, "arguments"), problems)
    if kind == "mcp_call":
        error = item.get("error")
        return Call(
            None,  # an MCP call carries its own output
            name,
            arguments,
            result=item.get("output"),
            error=error if isinstance(error, str) else None,
        )
    return Call(call_id, name, arguments)


READERS: Final = {CHAT: _chat, RESPONSES: _responses, ANTHROPIC: _anthropic}
