"""OpenInference's messages (`llm.input_messages.N.message.*`, `llm.output_messages.N.*`), the
flattened attributes Arize Phoenix's instrumentations write, as OpenAI Chat messages."""

from __future__ import annotations

from typing import Any, Final

from gradekit.suite.trace_chat import chat_call, unflatten
from gradekit.suite.traces import DialectError, Span

__all__ = ["OI_INPUT", "OI_OUTPUT", "openinference_messages"]

OI_INPUT: Final = "llm.input_messages."
OI_OUTPUT: Final = "llm.output_messages."


def openinference_messages(span: Span) -> list[dict[str, Any]]:
    """The span's OpenInference messages (input, then output) as Chat messages."""
    messages: list[dict[str, Any]] = []
    for prefix in (OI_INPUT, OI_OUTPUT):
        for index, item in enumerate(unflatten(span.attributes, prefix)):
            where = f"{prefix}{index}"
            message = item.get("message") if isinstance(item, dict) else None
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise DialectError(f"{where}.message has no role: {item!r:.80}")
            chat: dict[str, Any] = {"role": message["role"]}
            calls = [
                _oi_call(call, f"{where}.message.tool_calls")
                for call in message.get("tool_calls") or []
            ]
            content = message.get("content")
            if content is None and "contents" in message:
                content = _oi_contents(message["contents"], f"{where}.message.contents", calls)
            chat["content"] = content
            if calls:
                chat["tool_calls"] = calls
            if "tool_call_id" in message:
                chat["tool_call_id"] = message["tool_call_id"]
            messages.append(chat)
    return messages


def _oi_call(call: Any, where: str) -> dict[str, Any]:
    """An OpenInference `tool_call` (under `tool_calls.K` or a `tool_use` content) as Chat's."""
    inner = call.get("tool_call") if isinstance(call, dict) else None
    if not isinstance(inner, dict):
        raise DialectError(f"{where}: a tool call gradekit does not read: {call!r:.80}")
    function = inner.get("function") or {}
    return chat_call(inner.get("id"), function.get("name"), function.get("arguments"))


def _oi_contents(contents: Any, where: str, calls: list[dict[str, Any]]) -> str | None:
    """The text of OpenInference `contents`; a `tool_use` content (the Anthropic
    instrumentation writes each call there and under `tool_calls`) joins `calls` once."""
    texts = []
    for item in contents if isinstance(contents, list) else []:
        part = item.get("message_content") if isinstance(item, dict) else None
        if not isinstance(part, dict):
            raise DialectError(f"{where}: not read: {item!r:.80}")
        if part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif part.get("type") == "tool_use":
            call = _oi_call(item, where)
            if all(known["id"] != call["id"] for known in calls):
                calls.append(call)
        elif part.get("type") != "image":
            raise DialectError(f"{where}: a content gradekit does not read: {part!r:.80}")
    return "\n".join(texts) if texts else None
