"""`gradekit traces FILE...`: what a user sees before grading, in a child process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def test_traces_shows_every_case_turn_and_tool_call(gradekit, traces_of, tmp_path: Path):
    shutil.copy(traces_of("openllmetry", "one", "two"), tmp_path / "agent.jsonl")
    done = gradekit("traces", "agent.jsonl")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "case 'one' (agent.jsonl:1)"
    assert lines[1].startswith("  trace ")
    assert "model gpt-test, tokens 200 in / 40 out" in lines[1]
    assert lines[2:10] == [
        "  turn 0",
        "    input:  What is the weather in Paris?",
        '    tool:   get_weather({"city": "Paris"}) -> sunny, 21 C',
        "    output: It is sunny in Paris.",
        "  turn 1",
        "    input:  And in Rome?",
        '    tool:   get_weather({"city": "Rome"}) -> rain, 14 C',
        "    output: It rains in Rome.",
    ]
    assert lines[10] == "case 'two' (agent.jsonl:2)"
    assert lines[-1] == "2 cases read"


def test_traces_jsonl_lines_grade_as_the_traces_do(gradekit, traces_of, tmp_path: Path):
    shutil.copy(traces_of("openinference", "one", "two"), tmp_path / "agent.jsonl")
    done = gradekit("traces", "--jsonl", "agent.jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "2 cases read"
    (tmp_path / "cases.jsonl").write_text(done.stdout, encoding="utf-8")
    graders = "graders: [{kind: contains, values: [sunny]}, {kind: budget, max_tool_calls: 1}]\n"
    reports = {}
    for key, value in (("traces", "agent.jsonl"), ("dataset", "cases.jsonl")):
        (tmp_path / f"{key}.yaml").write_text(f"{key}: {value}\n{graders}", encoding="utf-8")
        run = gradekit("run", f"{key}.yaml", "-o", f"{key}.json")
        assert run.returncode == 1, run.stderr
        reports[key] = json.loads((tmp_path / f"{key}.json").read_text(encoding="utf-8"))

    def seen(report: dict) -> list:
        return [
            (
                case["name"],
                turn["input"],
                turn["output"],
                turn["tool_calls"],
                [(r["name"], r["passed"], r["message"]) for r in turn["results"]],
            )
            for case in report["cases"]
            for turn in case["turns"]
        ]

    assert seen(reports["traces"]) == seen(reports["dataset"])
    assert len(seen(reports["traces"])) == 4


def test_traces_names_cases_by_the_attribute_asked(gradekit, traces_of, tmp_path: Path):
    shutil.copy(traces_of("openai-v2", "one"), tmp_path / "agent.jsonl")
    done = gradekit("traces", "--case-attribute", "gen_ai.operation.name", "agent.jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "case 'invoke_agent' (agent.jsonl:1)"


def test_traces_names_each_line_it_cannot_read(gradekit, traces_of, tmp_path: Path):
    good = traces_of("openai-v2", "one").read_text(encoding="utf-8")
    (tmp_path / "agent.jsonl").write_text("{not json\n" + good, encoding="utf-8")
    done = gradekit("traces", "agent.jsonl")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("ERROR agent.jsonl:1: not a JSON line")
    assert "case 'one' (agent.jsonl:2)" in done.stdout
    assert done.stdout.splitlines()[-1] == "1 case read, 1 could not be read"
    missing = gradekit("traces", "agent.jsonl", "nowhere.jsonl")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "gradekit traces: no such file: nowhere.jsonl"
