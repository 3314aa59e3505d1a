"""`traces:` with real producers: an agent loop on the official openai SDK, instrumented by
each real instrumentation, its spans written as the Collector's file exporter writes them, is
graded by `gradekit run`; every turn's input, output, tool calls, verdicts and the trace's
figures are checked."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

_MAKER = Path(__file__).resolve().parent / "data" / "make_openllmetry_indexed.py"
_SPEC = importlib.util.spec_from_file_location("make_openllmetry_indexed", _MAKER)
assert _SPEC and _SPEC.loader
indexed = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(indexed)

INSTRUMENTATIONS = (
    "openai-v2",
    "openai-v2-events",
    "openinference",
    "openllmetry",
    "openllmetry-events",
    "anthropic-openinference",
    "anthropic-openllmetry",
)

SUITE = """\
name: traced
traces: {traces}
graders:
  - kind: behavior
    forbidden_tools: [delete_all]
cases:
  - name: paris-and-rome
    metadata: {{owner: weather-team}}
    graders:
      - kind: contains
        values: [sunny]
"""

TURNS = [
    ("What is the weather in Paris?", "It is sunny in Paris.", "Paris", "sunny, 21 C", True),
    ("And in Rome?", "It rains in Rome.", "Rome", "rain, 14 C", False),
]


def run_suite(gradekit, tmp_path: Path, files: list[Path], traces: str) -> dict:
    for file in files:
        shutil.copy(file, tmp_path / file.name)
    (tmp_path / "suite.yaml").write_text(SUITE.format(traces=traces), encoding="utf-8")
    done = gradekit("run", "suite.yaml", "-o", "report.json")
    assert done.returncode in (0, 1), done.stderr
    return json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("instrumentation", "ids"),
    [*((name, "hex") for name in INSTRUMENTATIONS), ("openai-v2", "base64")],
)
def test_every_turn_of_a_real_agent_run_is_graded(
    gradekit, traces_of, tmp_path, instrumentation, ids
):
    file = traces_of(instrumentation, "paris-and-rome", "stray", ids=ids)
    report = run_suite(gradekit, tmp_path, [file], '"*.jsonl"')
    check_graded(report, "claude-test" if "anthropic" in instrumentation else "gpt-test")


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_openllmetry_indexed_attributes_are_graded(gradekit, tmp_path, sdk):
    """OpenLLMetry before 0.60 (gen_ai.prompt.N.*, gen_ai.completion.N.*), as recorded by
    data/make_openllmetry_indexed.py from its 0.47.5 releases."""
    report = run_suite(gradekit, tmp_path, [indexed.RELEASES[sdk][1]], '"*.jsonl"')
    check_graded(report, "claude-test" if sdk == "anthropic" else "gpt-test")


@pytest.mark.slow
@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_openllmetry_indexed_attributes_from_the_live_release(gradekit, tmp_path, sdk):
    """The same, the older release installed (into a folder of its own) and run now."""
    file = indexed.produce(sdk, tmp_path / "live" / "indexed.jsonl")
    report = run_suite(gradekit, tmp_path, [file], '"*.jsonl"')
    check_graded(report, "claude-test" if sdk == "anthropic" else "gpt-test")


def test_a_run_is_named_by_its_conversation_id(gradekit, traces_of, tmp_path):
    """No span carries gradekit.case: OpenInference writes each run's session as
    gen_ai.conversation.id on its model-call spans, and that names the case."""
    file = traces_of("openinference-session", "paris-and-rome", "stray")
    spans = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    assert "gradekit.case" not in json.dumps(spans)
    assert '"gen_ai.conversation.id"' in json.dumps(spans)
    report = run_suite(gradekit, tmp_path, [file], '"*.jsonl"')
    check_graded(report, "gpt-test")


def check_graded(report: dict, model: str) -> None:
    """Both runs graded turn by turn: every input, output, tool call and verdict; the figures."""
    cases = {case["name"]: case for case in report["cases"]}
    assert set(cases) == {"paris-and-rome", "stray"}

    listed = cases["paris-and-rome"]
    assert not listed["errored"], listed
    assert [turn["passed"] for turn in listed["turns"]] == [True, False]
    for turn, (question, answer, city, result, sunny) in zip(listed["turns"], TURNS, strict=True):
        assert turn["input"] == question
        assert turn["output"] == answer
        assert turn["tool_calls"] == [
            {
                "name": "get_weather",
                "arguments": {"city": city},
                "result": result,
                "error": None,
                "turn": turn["index"],
            }
        ]
        verdicts = {result["kind"]: result["passed"] for result in turn["results"]}
        assert verdicts == {"behavior": True, "contains": sunny}
    trace = listed["metadata"]["trace"]
    assert listed["metadata"]["owner"] == "weather-team"
    assert len(trace["id"]) == 32 and int(trace["id"], 16)
    assert trace["model"] == model
    assert (trace["input_tokens"], trace["output_tokens"]) == (200, 40)
    assert trace["error_spans"] == 0
    assert trace["duration_ms"] > 0

    # The trace no case names is a case of its own, graded by the suite's graders only.
    stray = cases["stray"]
    assert not stray["errored"], stray
    assert [turn["output"] for turn in stray["turns"]] == [answer for _, answer, *_ in TURNS]
    assert {r["kind"] for turn in stray["turns"] for r in turn["results"]} == {"behavior"}
    assert stray["passed"]
