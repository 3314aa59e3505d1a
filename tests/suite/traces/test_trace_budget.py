"""The `budget` kind on a real agent run's trace and on cases written by hand, run through
`gradekit run` as a user would."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

BUDGET_SUITE = """\
traces: agent.jsonl
graders:
  - kind: budget
    max_total_tokens: 1000
    max_duration: 60
    max_tool_calls: 1
    max_error_spans: 0
  - kind: budget
    name: tight
    max_input_tokens: 100
cases:
  - name: by-hand
    input: hi
    output: hello
    metadata: {input_tokens: 10, output_tokens: 5, duration_ms: 1500, error_spans: 0}
  - name: no-figures
    input: hi
    output: hello
"""


def results(report: dict, case: str) -> list[dict[str, dict]]:
    (found,) = [c for c in report["cases"] if c["name"] == case]
    return [{r["name"]: r for r in turn["results"]} for turn in found["turns"]]


def test_budget_reads_the_trace_figures_and_hand_written_metadata(
    gradekit, traces_of, tmp_path: Path
):
    shutil.copy(traces_of("openai-v2", "run"), tmp_path / "agent.jsonl")
    (tmp_path / "suite.yaml").write_text(BUDGET_SUITE, encoding="utf-8")
    done = gradekit("run", "suite.yaml", "-o", "report.json")
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))

    first, second = results(report, "run")
    # 240 tokens, a short run, no failed span; one tool call by the first turn, two by the second.
    assert first["budget"]["passed"] and first["budget"]["score"] == 1.0
    assert first["budget"]["message"] == "kept 4 of 4 limits"
    assert not second["budget"]["passed"] and second["budget"]["score"] == 0.75
    assert second["budget"]["message"] == "kept 3 of 4 limits: tool_calls 2 > 1"
    assert first["tight"]["message"] == "kept 0 of 1 limits: input_tokens 200 > 100"
    assert first["tight"]["error"] is None

    (by_hand,) = results(report, "by-hand")
    assert by_hand["budget"]["passed"]
    assert [c["used"] for c in by_hand["budget"]["details"]["checks"]] == [15, 1.5, 0, 0]
    assert by_hand["tight"]["passed"]

    (missing,) = results(report, "no-figures")
    for name, figure in (
        ("budget", "total_tokens (for max_total_tokens)"),
        ("tight", "input_tokens"),
    ):
        assert missing[name]["error"] is not None and not missing[name]["passed"]
        assert figure in missing[name]["message"]
        assert "does not carry" in missing[name]["message"]
    (no_figures,) = [c for c in report["cases"] if c["name"] == "no-figures"]
    assert no_figures["errored"]


def test_a_budget_without_limits_is_a_suite_error(gradekit, tmp_path: Path):
    (tmp_path / "suite.yaml").write_text(
        "graders: [{kind: budget}, {kind: budget, name: b, max_duration: -1}]\n"
        "cases: [{output: a}]\n",
        encoding="utf-8",
    )
    done = gradekit("validate", "suite.yaml")
    assert done.returncode == 2
    assert "budget needs at least one limit: max_input_tokens" in done.stderr
    assert "max_duration must be a number >= 0, got -1" in done.stderr
