"""`traces:` on damaged input: a bad line is an errored case naming file:line and the other
traces go on; a trace with no conversation, a listed case no trace names, a late span, and a
big file read in bounded memory. The files start from a real producer's output."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import pytest

from gradekit import ConfigError
from gradekit.suite.load import load_suite

SUITE = """\
traces: {traces}
graders:
  - kind: behavior
    forbidden_tools: [delete_all]
cases:
  - name: first
  - name: nobody
"""


def suite(tmp_path: Path, traces: str = "agent.jsonl") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(traces=traces), encoding="utf-8")
    return path


def lines_of(file: Path) -> list[str]:
    return file.read_text(encoding="utf-8").splitlines()


def test_a_damaged_line_is_an_errored_case_and_the_other_traces_go_on(traces_of, tmp_path):
    good = lines_of(traces_of("openai-v2", "first", "second"))
    (tmp_path / "agent.jsonl").write_text(
        "\n".join([good[0], good[1][:200], "not json at all", '{"spans": []}', good[1]]) + "\n",
        encoding="utf-8",
    )
    cases = {case.name: case for case in load_suite(suite(tmp_path)).cases()}
    assert cases["first"].error is None and len(cases["first"].turns) == 2
    assert cases["second"].error is None and len(cases["second"].turns) == 2
    assert cases["agent.jsonl:2"].error.startswith("agent.jsonl:2: not a JSON line")
    assert cases["agent.jsonl:3"].error.startswith("agent.jsonl:3: not a JSON line")
    assert "no 'resourceSpans' or 'resourceLogs'" in cases["agent.jsonl:4"].error
    assert cases["nobody"].error.startswith("no trace carried the name 'nobody'")
    assert "gradekit.case" in cases["nobody"].error


def test_a_trace_with_no_conversation_names_what_was_looked_for(traces_of, tmp_path):
    request = json.loads(lines_of(traces_of("openai-v2", "first"))[0])
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"] = [
                    a for a in span["attributes"] if not a["key"].endswith("messages")
                ]
    (tmp_path / "agent.jsonl").write_text(json.dumps(request) + "\n", encoding="utf-8")
    (case,) = [case for case in load_suite(suite(tmp_path)).cases() if case.name == "first"]
    assert case.error.startswith("agent.jsonl:1: trace ")
    assert "no span holds a conversation; looked for gen_ai.input.messages" in case.error
    assert "llm.input_messages" in case.error


def test_a_span_arriving_after_its_trace_was_read_is_not_dropped(traces_of, tmp_path):
    good = lines_of(traces_of("openai-v2", "first", "second"))
    request = json.loads(good[0])
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    late = spans.pop(0)  # a model call, sent after the root span and far after
    late_request = {"resourceSpans": [{"scopeSpans": [{"spans": [late]}]}]}
    filler = [good[1]] * 70
    text = [json.dumps(request), *filler, json.dumps(late_request)]
    (tmp_path / "agent.jsonl").write_text("\n".join(text) + "\n", encoding="utf-8")
    cases = [case for case in load_suite(suite(tmp_path)).cases()]
    late_case = cases[-2]  # before the listed case no trace named
    assert late_case.name == "agent.jsonl:72"
    assert "came more than 64 lines after the trace's root span" in late_case.error


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("missing/*.jsonl", "no trace file matches 'missing/*.jsonl'"),
        ("{path: 3}", "expected a path or glob of OTLP JSON files"),
        ("{path: agent.jsonl, case_atribute: x}", "unknown key 'case_atribute'"),
    ],
)
def test_bad_traces_key_is_a_load_error(tmp_path, value, message):
    (tmp_path / "agent.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_suite(suite(tmp_path, value))
    assert message in str(raised.value.problems[0])


@pytest.mark.parametrize(
    "runs", [2000, pytest.param(22000, marks=pytest.mark.slow, id="200MB")], ids=str
)
def test_a_big_trace_file_is_read_in_bounded_memory(traces_of, tmp_path, runs):
    """Thousands of agent runs (18 MB; 200 MB under -m slow) read with a small peak."""
    request = json.loads(lines_of(traces_of("openai-v2", "first"))[0])
    template = json.dumps(request)
    trace_id = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    path = tmp_path / "agent.jsonl"
    with path.open("w", encoding="utf-8") as file:
        for index in range(runs):
            line = template.replace(trace_id, f"{index + 1:032x}")
            file.write(line.replace('"first"', f'"run-{index}"') + "\n")
    assert path.stat().st_size > runs * 9000
    tracemalloc.start()
    try:
        count = sum(1 for case in load_suite(suite(tmp_path)).cases() if case.error is None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == runs
    assert peak < 20_000_000, peak


def test_one_request_written_over_many_lines_is_read_whole(traces_of, tmp_path):
    """An OTLP/HTTP JSON body saved as a file: one request, pretty-printed."""
    request = json.loads(lines_of(traces_of("openai-v2", "first"))[0])
    (tmp_path / "agent.jsonl").write_text(json.dumps(request, indent=2), encoding="utf-8")
    cases = {case.name: case for case in load_suite(suite(tmp_path)).cases()}
    assert cases["first"].error is None
    assert [turn.sample.output for turn in cases["first"].turns] == [
        "It is sunny in Paris.",
        "It rains in Rome.",
    ]


def test_log_records_in_a_file_of_their_own_join_their_spans(traces_of, tmp_path):
    """The official instrumentation's content in log records, written by a logs pipeline to
    its own file, named after the spans' file so that a glob lists it last."""
    lines = lines_of(traces_of("openai-v2-events", "first"))
    spans = [line for line in lines if '"resourceSpans"' in line]
    logs = [line for line in lines if '"resourceLogs"' in line]
    assert spans and logs
    # Other runs after it, so that its trace is complete before the log file is reached.
    trace_id = json.loads(spans[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    for index in range(80):
        other = spans[0].replace(trace_id, f"{index + 1:032x}")
        spans.append(other.replace('"first"', f'"other-{index}"'))
    (tmp_path / "a-spans.jsonl").write_text("\n".join(spans) + "\n", encoding="utf-8")
    (tmp_path / "b-logs.jsonl").write_text("\n".join(logs) + "\n", encoding="utf-8")
    cases = {case.name: case for case in load_suite(suite(tmp_path, '"*.jsonl"')).cases()}
    assert cases["first"].error is None, cases["first"].error
    assert [turn.sample.output for turn in cases["first"].turns] == [
        "It is sunny in Paris.",
        "It rains in Rome.",
    ]
    assert len(cases) == 82  # first, the 80 others (errored: no content), nobody


def _edited(traces_of, tmp_path, edit) -> dict:
    """The real openai-v2 trace with `edit(span)` applied to each span, graded."""
    request = json.loads(lines_of(traces_of("openai-v2", "first"))[0])
    for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        edit(span)
    (tmp_path / "agent.jsonl").write_text(json.dumps(request) + "\n", encoding="utf-8")
    return {case.name: case for case in load_suite(suite(tmp_path)).cases()}


def _messages_edit(old: str, new: str):
    def edit(span: dict) -> None:
        for attribute in span["attributes"]:
            if attribute["key"] == "gen_ai.input.messages":
                value = attribute["value"]["stringValue"]
                attribute["value"]["stringValue"] = value.replace(old, new)

    return edit


def test_an_id_in_neither_encoding_is_an_errored_line(traces_of, tmp_path):
    cases = _edited(traces_of, tmp_path, lambda span: span.update(spanId="not-an-id"))
    assert cases["agent.jsonl:1"].error == (
        "agent.jsonl:1: spanId 'not-an-id' is not an id of 8 bytes in hex or base64; "
        "write the spans as OTLP JSON"
    )


def test_a_part_of_an_unknown_type_is_an_errored_case_naming_it(traces_of, tmp_path):
    cases = _edited(traces_of, tmp_path, _messages_edit('"type":"text"', '"type":"hologram"'))
    error = cases["first"].error
    assert error.startswith("agent.jsonl:1: trace ")
    assert "span 'chat gpt-test'" in error
    assert "gen_ai.input.messages[0].parts[0]: a part gradekit does not read: 'hologram'" in error


def test_a_tool_result_with_no_call_is_an_errored_case(traces_of, tmp_path):
    edit = _messages_edit(
        '"id":"call_first_0","type":"tool_call_response"',
        '"id":"call_x","type":"tool_call_response"',
    )
    cases = _edited(traces_of, tmp_path, edit)
    error = cases["first"].error
    assert error.startswith("agent.jsonl:1: trace "), error
    assert ": messages[4].tool_call_id: no earlier assistant tool call has id 'call_x'" in error, (
        error
    )
    assert error.endswith(
        "(in the conversation rebuilt from the trace: see it with `gradekit traces`)"
    )


@pytest.mark.parametrize(
    ("attribute", "named"),
    [("gen_ai.operation.name", "invoke_agent"), ("not.there", None)],
)
def test_case_attribute_names_the_cases(traces_of, tmp_path, attribute, named):
    """The attribute asked for names each case; a trace without it is named by its id."""
    shutil.copy(traces_of("openai-v2", "first"), tmp_path / "agent.jsonl")
    value = f"{{path: agent.jsonl, case_attribute: {attribute}}}"
    cases = [case for case in load_suite(suite(tmp_path, value)).cases() if case.error is None]
    (case,) = cases
    trace_id = case.turns[0].sample.metadata["trace"]["id"]
    assert case.name == (named or trace_id)
    assert len(trace_id) == 32


def test_an_indexed_part_of_an_unknown_type_is_an_errored_case_naming_it(tmp_path):
    """OpenLLMetry's indexed content (a list of blocks as JSON text) holding a block gradekit
    does not read: the case says where, never grading the conversation without it."""
    recorded = Path(__file__).resolve().parent / "data" / "anthropic-openllmetry-0.47.5.jsonl"
    lines = lines_of(recorded)
    request = json.loads(lines[0])
    for scope in request["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            for attribute in span["attributes"]:
                if attribute["key"] == "gen_ai.prompt.3.content":
                    value = attribute["value"]["stringValue"]
                    attribute["value"]["stringValue"] = value.replace("tool_result", "hologram")
    (tmp_path / "agent.jsonl").write_text(json.dumps(request) + "\n", encoding="utf-8")
    cases = {case.name: case for case in load_suite(suite(tmp_path)).cases()}
    error = cases["paris-and-rome"].error
    assert error.startswith("agent.jsonl:1: trace "), error
    assert "span 'anthropic.chat'" in error
    assert "gen_ai.prompt.3.content[0]: a part gradekit does not read: 'hologram'" in error
