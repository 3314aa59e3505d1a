"""Reports show each traced case's trace: its id, model, tokens and duration (JSON and HTML in
the case's metadata, Markdown on the case's block)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SUITE = """\
traces: agent.jsonl
graders:
  - kind: contains
    values: [sunny]
"""


def test_reports_show_the_trace_of_each_case(gradekit, traces_of, tmp_path: Path):
    shutil.copy(traces_of("openai-v2", "weather"), tmp_path / "agent.jsonl")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--markdown", "r.md", "--html", "r.html")
    assert done.returncode == 1, done.stderr  # the second turn is about rain
    (case,) = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["cases"]
    trace = case["metadata"]["trace"]
    assert trace["model"] == "gpt-test" and trace["input_tokens"] == 200

    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    took = f"{trace['duration_ms']:.0f} ms"
    line = f"- `trace {trace['id']}: model gpt-test, tokens 200 in / 40 out, {took}, error spans 0`"
    assert line in markdown.splitlines()

    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert trace["id"] in html and '"input_tokens":200' in html.replace(" ", "")
