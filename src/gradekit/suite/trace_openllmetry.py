"""OpenLLMetry's indexed attributes (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`), which its
instrumentations wrote before 0.60, as OpenAI Chat messages.

Each message is `role`, `content` (text; a message whose content was a list of parts has that
list as JSON text), `tool_call_id` on tool messages and `tool_calls.K.id` / `.name` /
`.arguments` on the assistant's; a completion carries `refusal` in place of `content` when the
model refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from gradekit.suite.trace_chat import chat_call, unflatten
from gradekit.suite.traces import DialectError, Span

__all__ = ["LL_COMPLETION", "LL_PROMPT", "indexed_messages", "is_indexed"]

LL_PROMPT: Final = "gen_ai.prompt."
LL_COMPLETION: Final = "gen_ai.completion."


def is_indexed(attributes: Mapping[str, Any]) -> bool:
    """Whether the span's attributes hold OpenLLMetry's indexed messages."""
    return any(
        key.startswith((LL_PROMPT, LL_COMPLETION)) and key.split(".", 3)[2].isdigit()
        for key in attributes
    )


def indexed_messages(span: Span) -> list[dict[str, Any]]:
    """The span's prompt messages, then its completions, as Chat messages."""
    messages: list[dict[str, Any]] = []
    for prefix in (LL_PROMPT, LL_COMPLETION):
        for index, item in enumerate(unflatten(span.attributes, prefix)):
            messages.extend(_message(item, f"{prefix}{index}"))
    return messages


def _message(item: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(item, dict) or not isinstance(item.get("role"), str):
        raise DialectError(f"{where}.role is missing: {item!r:.80}")
    role = item["role"]
    calls = [_call(call, f"{where}.tool_calls.{k}") for k, call in enumerate(_listed(item))]
    content = item.get("content", item.get("refusal"))
    results: list[dict[str, Any]] = []
    parts = _parts(content)
    if parts is not None:
        content = _read_parts(parts, f"{where}.content", calls, results)
    elif content is not None and not isinstance(content, str):
        raise DialectError(f"{where}.content is not text: {content!r:.80}")
    chat: dict[str, Any] = {"role": role, "content": content}
    if calls:
        chat["tool_calls"] = calls
    if "tool_call_id" in item:
        chat["tool_call_id"] = item["tool_call_id"]
    # A user message holding only tool results (Anthropic's form) is those results.
    return results if results and content is None and not calls else [chat, *results]


def _listed(item: dict[str, Any]) -> list[Any]:
    calls = item.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise DialectError(f"tool_calls is not indexed: {calls!r:.80}")
    return calls


def _call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise DialectError(f"{where}: a tool call without a name: {call!r:.80}")
    return chat_call(call.get("id"), call["name"], call.get("arguments"))


def _parts(content: Any) -> list[dict[str, Any]] | None:
    """Content that was a list of parts (written as JSON text), else None: text that only
    looks like JSON stays text."""
    if isinstance(content, str) and content.startswith("["):
        try:
            content = json.loads(content)
        except ValueError:
            return None
    if isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("type"), str) for part in content
    ):
        return content
    return None


def _read_parts(
    parts: list[dict[str, Any]],
    where: str,
    calls: list[dict[str, Any]],
    results: list[dict[str, Any]],
) -> str | None:
    """The text of Chat parts or Anthropic blocks; `tool_use` blocks join `calls`,
    `tool_result` blocks `results` (as tool messages)."""
    texts: list[str] = []
    for index, part in enumerate(parts):
        kind = part["type"]
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "tool_use":
            call = _call({**part, "arguments": part.get("input")}, f"{where}[{index}]")
            if all(known["id"] != call["id"] for known in calls):
                calls.append(call)
        elif kind == "tool_result":
            inner = part.get("content")
            if isinstance(inner, list):
                inner = _read_parts(inner, f"{where}[{index}].content", [], [])
            elif inner is not None and not isinstance(inner, str):
                inner = json.dumps(inner)
            results.append(
                {"role": "tool", "tool_call_id": part.get("tool_use_id"), "content": inner}
            )
        elif kind not in ("image", "image_url"):
            raise DialectError(f"{where}[{index}]: a part gradekit does not read: {kind!r}")
    return "\n".join(texts) if texts else None
