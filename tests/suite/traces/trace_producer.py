"""A real producer of OTLP trace files for the tests: a small tool-calling agent loop drives
the official `openai` SDK against a scripted OpenAI-compatible server on 127.0.0.1 (the judge
tests' server, in a thread), instrumented by one of three real instrumentations, and writes
the spans as the OpenTelemetry Collector's `file` exporter does: one ExportTraceServiceRequest
(and one ExportLogsServiceRequest, for log records) as protobuf JSON per line.

Run as `python trace_producer.py [--hex|--base64] INSTRUMENTATION OUT [CASE...]`; each CASE is
one agent run (a trace whose root span carries `gradekit.case`). Every instrumentation patches
the SDK for the whole process, so each runs in a process of its own.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from typing import Any

INSTRUMENTATIONS = (
    "openai-v2",
    "openai-v2-events",
    "openinference",
    "openllmetry",
    "openllmetry-events",
    "anthropic-openinference",
    "anthropic-openllmetry",
    "openllmetry-indexed",
    "anthropic-openllmetry-indexed",
    "openinference-session",
)
"""`openai-v2`: the official instrumentation with the latest GenAI conventions, content on the
spans (`gen_ai.input.messages`); `openai-v2-events`: the same with content in log records
(GenAI events); OpenInference's and OpenLLMetry's for the openai SDK; then theirs for the
anthropic SDK; `openllmetry-indexed`: an older OpenLLMetry (before 0.60, installed apart: see
`data/make_openllmetry_indexed.py`) writing its indexed `gen_ai.prompt.N.*` attributes, and
`anthropic-openllmetry-indexed` the same for the anthropic SDK;
`openinference-session`: OpenInference's with its GenAI attributes on, each run in a session
(`using_session(CASE)`, which it writes as `gen_ai.conversation.id`) and no `gradekit.case`."""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]

CONVERSATION = (
    ("What is the weather in Paris?", "Paris", "It is sunny in Paris."),
    ("And in Rome?", "Rome", "It rains in Rome."),
)
"""Each user message, the city the model asks the tool about, and the model's answer."""


def weather(city: str) -> str:
    """The agent's tool."""
    return {"Paris": "sunny, 21 C", "Rome": "rain, 14 C"}.get(city, "unknown")


def _replies(case: str) -> list[Any]:
    """What the scripted server answers, in order, for one agent run."""
    from judge_server import Answer

    answers = []
    for index, (_, city, text) in enumerate(CONVERSATION):
        call = {
            "id": f"call_{case}_{index}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        for message, finish in (
            ({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"),
            ({"role": "assistant", "content": text}, "stop"),
        ):
            answers.append(
                Answer(
                    body={
                        "id": f"chatcmpl-{case}-{len(answers)}",
                        "object": "chat.completion",
                        "created": 1,
                        "model": "gpt-test",
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {
                            "prompt_tokens": 50,
                            "completion_tokens": 10,
                            "total_tokens": 60,
                        },
                    }
                )
            )
    return answers


def instrument(name: str, tracer_provider: Any, logger_provider: Any) -> None:
    """Instrument the openai SDK with `name`, capturing message content."""
    if name in ("openai-v2", "openai-v2-events"):
        if name == "openai-v2":
            os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
            os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        else:
            os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
            os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
    elif name in ("openinference", "openinference-session"):
        if name == "openinference-session":
            os.environ["OPENINFERENCE_ENABLE_GENAI_SEMCONV"] = "true"
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        OIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif name in ("openllmetry", "openllmetry-events"):
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LLInstrumentor

        LLInstrumentor(use_attributes=name == "openllmetry").instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
    elif name == "openllmetry-indexed":
        # The releases before 0.60 take no use_attributes; their default writes the indexed
        # gen_ai.prompt.N.* / gen_ai.completion.N.* span attributes.
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OldInstrumentor

        OldInstrumentor().instrument(tracer_provider=tracer_provider)
    elif name == "anthropic-openinference":
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    elif name in ("anthropic-openllmetry", "anthropic-openllmetry-indexed"):
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.anthropic import (
            AnthropicInstrumentor as LLAnthropicInstrumentor,
        )

        LLAnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    else:
        raise SystemExit(f"unknown instrumentation {name}; one of {INSTRUMENTATIONS}")


def agent(client: Any, tracer: Any, case: str | None) -> None:
    """The agent loop: each user message, then model calls until the model stops calling
    tools; each tool runs in an `execute_tool` span as the GenAI conventions say. The root
    span carries `gradekit.case` unless `case` is None."""
    with tracer.start_as_current_span("invoke_agent weather-bot") as root:
        if case is not None:
            root.set_attribute("gradekit.case", case)
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You answer questions about the weather."}
        ]
        for question, _, _ in CONVERSATION:
            messages.append({"role": "user", "content": question})
            while True:
                reply = client.chat.completions.create(
                    model="gpt-test", messages=messages, tools=TOOLS
                )
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    with tracer.start_as_current_span(f"execute_tool {call.function.name}") as span:
                        span.set_attribute("gen_ai.operation.name", "execute_tool")
                        span.set_attribute("gen_ai.tool.name", call.function.name)
                        span.set_attribute("gen_ai.tool.call.id", call.id)
                        span.set_attribute("gen_ai.tool.call.arguments", call.function.arguments)
                        result = weather(**json.loads(call.function.arguments))
                        span.set_attribute("gen_ai.tool.call.result", result)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def _anthropic_replies(case: str) -> list[Any]:
    """What the scripted server answers an Anthropic agent, in order, for one run."""
    from judge_server import Answer

    answers = []
    for index, (_, city, text) in enumerate(CONVERSATION):
        call = {
            "type": "tool_use",
            "id": f"toolu_{case}_{index}",
            "name": "get_weather",
            "input": {"city": city},
        }
        for content, stop in (([call], "tool_use"), ([{"type": "text", "text": text}], "end_turn")):
            answers.append(
                Answer(
                    body={
                        "id": f"msg_{case}_{len(answers)}",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-test",
                        "content": content,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 50, "output_tokens": 10},
                    }
                )
            )
    return answers


def anthropic_agent(client: Any, tracer: Any, case: str) -> None:
    """The same agent on the anthropic SDK: `tool_use` blocks answered by `tool_result`."""
    tools = [
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]
    with tracer.start_as_current_span("invoke_agent weather-bot") as root:
        root.set_attribute("gradekit.case", case)
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        messages: list[dict[str, Any]] = []
        for question, _, _ in CONVERSATION:
            messages.append({"role": "user", "content": question})
            while True:
                reply = client.messages.create(
                    model="claude-test",
                    max_tokens=256,
                    system="You answer questions about the weather.",
                    messages=messages,
                    tools=tools,
                )
                blocks = [block.model_dump(exclude_none=True) for block in reply.content]
                messages.append({"role": "assistant", "content": blocks})
                calls = [block for block in reply.content if block.type == "tool_use"]
                if not calls:
                    break
                results = []
                for call in calls:
                    with tracer.start_as_current_span(f"execute_tool {call.name}") as span:
                        span.set_attribute("gen_ai.operation.name", "execute_tool")
                        span.set_attribute("gen_ai.tool.name", call.name)
                        span.set_attribute("gen_ai.tool.call.id", call.id)
                        span.set_attribute("gen_ai.tool.call.arguments", json.dumps(call.input))
                        result = weather(**call.input)
                        span.set_attribute("gen_ai.tool.call.result", result)
                    results.append(
                        {"type": "tool_result", "tool_use_id": call.id, "content": result}
                    )
                messages.append({"role": "user", "content": results})


def main(argv: list[str]) -> None:
    """Run the agent once per case and write the OTLP JSON lines to the output file."""
    ids = "hex"
    if argv[0] in ("--hex", "--base64"):
        ids = argv.pop(0)[2:]
    name, out, *cases = argv
    from google.protobuf.json_format import MessageToJson
    from judge_server import JudgeServer
    from openai import OpenAI
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs import export as log_export
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    # InMemoryLogExporter before opentelemetry-sdk 1.39 (the older producers run on 1.33).
    memory = (
        getattr(log_export, "InMemoryLogRecordExporter", None) or log_export.InMemoryLogExporter
    )
    logs = memory()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(log_export.SimpleLogRecordProcessor(logs))
    instrument(name, tracer_provider, logger_provider)
    tracer = tracer_provider.get_tracer("weather-bot")
    lines: list[str] = []
    with JudgeServer() as server:
        for case in cases or ["weather"]:
            if name.startswith("anthropic"):
                from anthropic import Anthropic

                server.script(*_anthropic_replies(case))
                claude = Anthropic(base_url=server.url, api_key="sk-test", max_retries=0)
                anthropic_agent(claude, tracer, case)
            else:
                server.script(*_replies(case))
                client = OpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
                if name == "openinference-session":
                    from openinference.instrumentation import using_session

                    with using_session(case):
                        agent(client, tracer, None)
                else:
                    agent(client, tracer, case)
            # The Collector's file exporter writes each batch it receives as one line of
            # compact JSON; here each agent run's spans are one batch, its log records another.
            lines.append(_line(MessageToJson(encode_spans(spans.get_finished_spans())), ids))
            spans.clear()
            records = logs.get_finished_logs()
            if records:
                lines.append(_line(MessageToJson(encode_logs(records)), ids))
                logs.clear()
    with open(out, "w", encoding="utf-8") as file:
        file.writelines(line + "\n" for line in lines)


def _line(text: str, ids: str) -> str:
    """One request as a compact JSON line, ids in hex (OTLP JSON, as the Collector writes them)
    or base64 (protobuf's JSON mapping, as MessageToJson writes them)."""
    request = json.loads(text)
    if ids == "hex":
        _hex_ids(request)
    return json.dumps(request, separators=(",", ":"))


def _hex_ids(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


if __name__ == "__main__":
    main(sys.argv[1:])
