"""A trace's conversation, rebuilt as an OpenAI Chat transcript from the dialects that real
instrumentations write, and the trace's figures (`metadata.trace`).

The transcript rules of `gradekit.suite.transcript` then make the turns: this module only
rebuilds messages, it assembles no turn. Every dialect builds its Chat messages from
flattened attributes made nested again (`unflatten`) and tool calls in Chat's form
(`chat_call`).

Dialects read, on each model-call span:

- the OpenTelemetry GenAI semantic conventions: `gen_ai.input.messages` and
  `gen_ai.output.messages` (JSON text on the span, or structured values on the span or on a
  GenAI log record joined to it by span id, such as the
  `gen_ai.client.inference.operation.details` event), `gen_ai.system_instructions`; messages of
  `parts` (`text`, `tool_call`, `tool_call_response`); OpenLLMetry writes the same;
- the older GenAI form: an event per message (`gen_ai.system.message`, `gen_ai.user.message`,
  `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`), as span events or log
  records (OpenLLMetry with `use_attributes=False` writes these);
- OpenLLMetry's indexed attributes (before its 0.60): `gen_ai.prompt.N.*` and
  `gen_ai.completion.N.*` (`role`, `content`: text, or a list of parts as JSON text;
  `tool_call_id` on tool messages, `tool_calls.K.id` / `.name` / `.arguments` on the
  assistant's; a completion carries `refusal` in place of `content` when the model refused);
- OpenInference, the flattened attributes Arize Phoenix's instrumentations write:
  `llm.input_messages.N.message.*` and `llm.output_messages.N.message.*` (`role`, `content` or
  `contents`, `tool_calls.K.tool_call.*`, `tool_call_id`).

An agent sends the whole conversation so far on each model call, so the conversation is the
input of the last model call (the one that ends last) followed by its output. A tool call no
message answers takes its result from the tool span that executed it (`execute_tool` spans:
`gen_ai.tool.call.id`, `gen_ai.tool.call.result`; OpenInference TOOL spans: `output.value`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from gradekit.suite.traces import DialectError, Span, Trace

__all__ = [
    "LL_COMPLETION",
    "LL_PROMPT",
    "LOOKED_FOR",
    "OI_INPUT",
    "OI_OUTPUT",
    "DialectError",
    "chat_call",
    "conversation",
    "figures",
    "indexed_messages",
    "is_indexed",
    "openinference_messages",
    "unflatten",
]


def chat_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """A tool call as an OpenAI Chat message holds it: `arguments` kept when they are JSON
    text already, else written as JSON (no arguments: `{}`)."""
    if not isinstance(arguments, str):
        arguments = json.dumps({} if arguments is None else arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def unflatten(attributes: Mapping[str, Any], prefix: str) -> list[Any]:
    """`prefix.0.message.role`-style attributes as a list of nested dicts (lists where all
    keys of a level are indices)."""
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
    calls = [_call(call, f"{where}.tool_calls.{k}") for k, call in enumerate(_tool_calls_of(item))]
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


def _tool_calls_of(item: dict[str, Any]) -> list[Any]:
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


LOOKED_FOR: Final = (
    "gen_ai.input.messages / gen_ai.output.messages (OpenTelemetry GenAI conventions, on spans "
    "or in log records joined by span id), gen_ai.user.message / gen_ai.choice events (the "
    "older GenAI form, span events or log records), gen_ai.prompt.N.* / gen_ai.completion.N.* "
    "(OpenLLMetry before 0.60) or llm.input_messages.* / llm.output_messages.* (OpenInference)"
)
INPUT: Final = "gen_ai.input.messages"
OUTPUT: Final = "gen_ai.output.messages"
SYSTEM: Final = "gen_ai.system_instructions"

EVENT_ROLES: Final = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "choice",
}
"""The older GenAI form's message events (on spans, or log records), and each one's role."""
_INPUT_TOKENS: Final = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",  # the older GenAI name (OpenLLMetry before 0.60)
    "llm.token_count.prompt",
)
_OUTPUT_TOKENS: Final = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
_MODEL: Final = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")


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
    if any(key.startswith((OI_INPUT, OI_OUTPUT)) for key in span.attributes):
        return True
    return is_indexed(span.attributes) or bool(_events(span))


def _events(span: Span) -> list[tuple[str, dict[str, Any]]]:
    """The span's GenAI message events, in order: span events, then log records."""
    found = [(name, attributes) for name, attributes in span.events if name in EVENT_ROLES]
    for record in span.logs:
        if record.event in EVENT_ROLES:
            body = record.body if isinstance(record.body, dict) else {}
            found.append((record.event, {**record.attributes, **body}))
    return found


def _usage_span(span: Span) -> bool:
    """A model-call span, for the figures (content captured or not)."""
    attributes = span.attributes
    return (
        attributes.get("gen_ai.operation.name") in ("chat", "text_completion", "generate_content")
        or attributes.get("openinference.span.kind") == "LLM"
        or attributes.get("llm.request.type") in ("chat", "completion")
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
            messages = openinference_messages(last)
        elif _content(last, INPUT) is not None or _content(last, OUTPUT) is not None:
            messages = _genai(last)
        elif is_indexed(last.attributes):
            messages = indexed_messages(last)
        else:
            messages = _event_messages(_events(last))
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
            calls.append(chat_call(part.get("id"), part.get("name"), part.get("arguments")))
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


def _event_messages(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The older GenAI form: one event per message (`gen_ai.user.message`, `gen_ai.choice`,
    ...), its body (or attributes) holding `content`, `tool_calls` and, for a tool message,
    `id`. A tool message without an id (OpenLLMetry writes none) answers the first call
    before it that nothing answered yet."""
    messages: list[dict[str, Any]] = []
    pending: list[str] = []
    for index, (name, body) in enumerate(events):
        where = f"event {name} [{index}]"
        role = EVENT_ROLES[name]
        source = body
        if role == "choice":
            message = body.get("message")
            source = {**(message if isinstance(message, dict) else {}), **body}
            role = str(source.get("role") or "assistant")
        content = source.get("content")
        if isinstance(content, list):
            content = _parts_text(content, where)
        elif content is not None and not isinstance(content, str):
            raise DialectError(f"{where}: content gradekit does not read: {content!r:.80}")
        chat: dict[str, Any] = {"role": role, "content": content}
        if role == "tool":
            call_id = source.get("id") or source.get("tool_call_id")
            if call_id is None and pending:
                call_id = pending[0]
            if call_id in pending:
                pending.remove(call_id)
            chat["tool_call_id"] = call_id
        calls = source.get("tool_calls")
        if calls:
            if not isinstance(calls, list):
                raise DialectError(f"{where}: tool_calls is not a list: {calls!r:.80}")
            chat["tool_calls"] = [_event_call(call, where) for call in calls]
            pending.extend(call["id"] for call in chat["tool_calls"] if call["id"])
        messages.append(chat)
    return messages


def _event_call(call: Any, where: str) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        raise DialectError(f"{where}: a tool call gradekit does not read: {call!r:.80}")
    return chat_call(call.get("id"), function.get("name"), function.get("arguments"))


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
