"""A trace's conversation, rebuilt as an OpenAI Chat transcript from the dialects that real
instrumentations write, and the trace's figures (`metadata.trace`).

The transcript rules of `gradekit.suite.transcript` then make the turns: this module only
rebuilds messages, it assembles no turn.

Dialects read, on each model-call span:

- the OpenTelemetry GenAI semantic conventions: `gen_ai.input.messages` and
  `gen_ai.output.messages` (JSON text on the span, or structured values on the span or on a
  GenAI log record joined to it by span id, such as the
  `gen_ai.client.inference.operation.details` event), `gen_ai.system_instructions`; messages of
  `parts` (`text`, `tool_call`, `tool_call_response`); OpenLLMetry writes the same;
- OpenInference: `llm.input_messages.N.message.*` and `llm.output_messages.N.message.*`
  (`role`, `content` or `contents`, `tool_calls.K.tool_call.*`, `tool_call_id`).

An agent sends the whole conversation so far on each model call, so the conversation is the
input of the last model call (the one that ends last) followed by its output. A tool call no
message answers takes its result from the tool span that executed it (`execute_tool` spans:
`gen_ai.tool.call.id`, `gen_ai.tool.call.result`; OpenInference TOOL spans: `output.value`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from gradekit.suite.traces import Span, Trace

__all__ = ["LOOKED_FOR", "conversation", "figures"]

LOOKED_FOR: Final = (
    "gen_ai.input.messages / gen_ai.output.messages (OpenTelemetry GenAI conventions, on spans "
    "or in log records joined by span id) or llm.input_messages.* / llm.output_messages.* "
    "(OpenInference)"
)
INPUT: Final = "gen_ai.input.messages"
OUTPUT: Final = "gen_ai.output.messages"
SYSTEM: Final = "gen_ai.system_instructions"
OI_INPUT: Final = "llm.input_messages."
OI_OUTPUT: Final = "llm.output_messages."

_INPUT_TOKENS: Final = ("gen_ai.usage.input_tokens", "llm.token_count.prompt")
_OUTPUT_TOKENS: Final = ("gen_ai.usage.output_tokens", "llm.token_count.completion")
_MODEL: Final = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")


class DialectError(ValueError):
    """Content a dialect holds in a form gradekit does not read (never dropped silently)."""


def _content(span: Span, key: str) -> Any:
    """The value of `key` on the span, else on a log record joined to it."""
    if key in span.attributes:
        return span.attributes[key]
    for record in span.logs:
        if key in record.attributes:
            return record.attributes[key]
        if isinstance(record.body, dict) and key in record.body:
            return record.body[key]
    return None


def _model_call(span: Span) -> bool:
    """A span holding a model call's messages in some dialect."""
    if _content(span, INPUT) is not None or _content(span, OUTPUT) is not None:
        return True
    return any(key.startswith((OI_INPUT, OI_OUTPUT)) for key in span.attributes)


def _usage_span(span: Span) -> bool:
    """A model-call span, for the figures (content captured or not)."""
    attributes = span.attributes
    return (
        attributes.get("gen_ai.operation.name") in ("chat", "text_completion", "generate_content")
        or attributes.get("openinference.span.kind") == "LLM"
        or _model_call(span)
    )


def conversation(trace: Trace) -> list[dict[str, Any]] | None:
    """The trace's conversation as OpenAI Chat messages, None when no span holds one.

    Raises DialectError naming the span and key of content gradekit cannot read."""
    calls = [span for span in trace.spans if _model_call(span)]
    if not calls:
        return None
    last = max(calls, key=lambda span: (span.end, span.start))
    try:
        if any(key.startswith((OI_INPUT, OI_OUTPUT)) for key in last.attributes):
            messages = _openinference(last)
        else:
            messages = _genai(last)
    except DialectError as error:
        raise DialectError(f"span '{last.name}' ({last.span_id}): {error}") from None
    return _answered(messages, trace)


def _decoded(value: Any, key: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise DialectError(f"{key} is not JSON: {value[:80]!r}") from None
    return value


def _genai(span: Span) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    system = _decoded(_content(span, SYSTEM), SYSTEM)
    if system is not None:
        text = _parts_text(system if isinstance(system, list) else [system], SYSTEM)
        messages.append({"role": "system", "content": text})
    for key in (INPUT, OUTPUT):
        found = _decoded(_content(span, key), key)
        if found is None:
            continue
        if not isinstance(found, list):
            raise DialectError(f"{key} is not a list of messages: {found!r:.80}")
        for index, message in enumerate(found):
            messages.extend(_genai_message(message, f"{key}[{index}]"))
    return messages


def _parts_text(parts: list[Any], where: str) -> str:
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("content", "")))
        else:
            raise DialectError(f"{where}: a part gradekit does not read: {part!r:.80}")
    return "\n".join(texts)


def _genai_message(message: Any, where: str) -> list[dict[str, Any]]:
    """One GenAI message (`role`, `parts`) as Chat messages (a tool message per response)."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise DialectError(f"{where} is not a message with a role: {message!r:.80}")
    role = message["role"]
    parts = message.get("parts")
    if parts is None and "content" in message:  # a message written the Chat way
        return [{key: value for key, value in message.items() if key != "finish_reason"}]
    if not isinstance(parts, list):
        raise DialectError(f"{where} has no list of parts: {message!r:.80}")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for index, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("content", "")))
        elif kind == "tool_call":
            arguments = part.get("arguments")
            calls.append(
                {
                    "id": part.get("id"),
                    "type": "function",
                    "function": {
                        "name": part.get("name"),
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps({} if arguments is None else arguments),
                    },
                }
            )
        elif kind == "tool_call_response":
            response = part.get("response", part.get("result"))
            results.append(
                {
                    "role": "tool",
                    "tool_call_id": part.get("id"),
                    "content": response if isinstance(response, str) else json.dumps(response),
                }
            )
        elif kind == "reasoning":
            continue  # the model's own thinking: neither the output nor a tool call
        else:
            raise DialectError(f"{where}.parts[{index}]: a part gradekit does not read: {kind!r}")
    found: list[dict[str, Any]] = []
    if texts or calls or not results:
        chat: dict[str, Any] = {"role": role, "content": "\n".join(texts) if texts else None}
        if calls:
            chat["tool_calls"] = calls
        found.append(chat)
    return found + results


def _unflatten(attributes: Mapping[str, Any], prefix: str) -> list[Any]:
    """`prefix.0.message.role`-style attributes as a list of nested dicts."""
    root: dict[str, Any] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        node = root
        steps = key[len(prefix) :].split(".")
        for step in steps[:-1]:
            node = node.setdefault(step, {})
            if not isinstance(node, dict):
                raise DialectError(f"{key} is under a value: {value!r:.80}")
        node[steps[-1]] = value
    return [_listed(root[index]) for index in sorted(root, key=_index)]


def _index(step: str) -> int:
    if not step.isdigit():
        raise DialectError(f"'{step}' where a message index was expected")
    return int(step)


def _listed(node: Any) -> Any:
    """Dicts whose keys are all indices become lists."""
    if not isinstance(node, dict):
        return node
    if node and all(key.isdigit() for key in node):
        return [_listed(node[key]) for key in sorted(node, key=int)]
    return {key: _listed(value) for key, value in node.items()}


def _openinference(span: Span) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for prefix in (OI_INPUT, OI_OUTPUT):
        for index, item in enumerate(_unflatten(span.attributes, prefix)):
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
    return {
        "id": inner.get("id"),
        "type": "function",
        "function": {"name": function.get("name"), "arguments": function.get("arguments") or "{}"},
    }


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


def _tool_results(trace: Trace) -> dict[str, Any]:
    """Tool results by call id, from the spans that executed the tools."""
    found: dict[str, Any] = {}
    for span in trace.spans:
        attributes = span.attributes
        call_id = attributes.get("gen_ai.tool.call.id") or attributes.get("tool_call.id")
        if not isinstance(call_id, str):
            continue
        if "gen_ai.tool.call.result" in attributes:
            found[call_id] = attributes["gen_ai.tool.call.result"]
        elif attributes.get("openinference.span.kind") == "TOOL" and "output.value" in attributes:
            found[call_id] = attributes["output.value"]
    return found


def _answered(messages: list[dict[str, Any]], trace: Trace) -> list[dict[str, Any]]:
    """`messages` with a tool message after each call no message answers, when a tool span
    holds its result."""
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    results = _tool_results(trace)
    found: list[dict[str, Any]] = []
    for message in messages:
        found.append(message)
        for call in message.get("tool_calls") or []:
            call_id = call.get("id") if isinstance(call, dict) else None
            if call_id in answered or call_id not in results:
                continue
            result = results[call_id]
            text = result if isinstance(result, str) else json.dumps(result)
            found.append({"role": "tool", "tool_call_id": call_id, "content": text})
    return found


def figures(trace: Trace) -> dict[str, Any]:
    """The trace's `metadata.trace`: id, model, input and output tokens (summed over the model
    calls, null unless every call says), duration in ms (first start to last end) and the
    number of spans whose status is ERROR."""
    calls = sorted((span for span in trace.spans if _usage_span(span)), key=lambda s: s.end)
    model = None
    for span in calls:
        for key in _MODEL:
            if isinstance(span.attributes.get(key), str):
                model = span.attributes[key]
                break
    timed = [span for span in trace.spans if span.start and span.end]
    duration = (max(s.end for s in timed) - min(s.start for s in timed)) / 1e6 if timed else None
    return {
        "id": trace.id,
        "model": model,
        "input_tokens": _summed(calls, _INPUT_TOKENS),
        "output_tokens": _summed(calls, _OUTPUT_TOKENS),
        "duration_ms": duration,
        "error_spans": sum(1 for span in trace.spans if span.error),
    }


def _summed(calls: list[Span], keys: tuple[str, ...]) -> int | None:
    total = 0
    for span in calls:
        value = next((span.attributes[k] for k in keys if k in span.attributes), None)
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        total += value
    return total if calls else None
