"""The HTML viewer of a run graded from traces, in a real headless Chromium: a traced case's
view starts with its trace's line (id, model, tokens, duration, failed spans), as the Markdown
report's block does; a case written by hand has none."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

from chromium import Browser, chromium, file_url
from cli_support import REPO, Run

TRACE = REPO / "tests" / "suite" / "traces" / "data" / "openllmetry-0.47.5.jsonl"
"""Two agent runs (`paris-and-rome`, `stray`) written by a real instrumentation."""

SUITE = """\
name: traced
traces: agent.jsonl
graders:
  - kind: contains
    values: [sunny]
cases:
  - name: by-hand
    input: Weather in Oslo?
    output: sunny
"""


def test_a_traced_case_view_shows_its_trace_line(gradekit: Run, tmp_path: Path) -> None:
    chromium()
    shutil.copy(TRACE, tmp_path / "agent.jsonl")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--html", "r.html")
    assert done.returncode == 1, done.stderr  # the traces' second turns are about rain
    cases = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["cases"]
    trace = next(case for case in cases if case["name"] == "paris-and-rome")["metadata"]["trace"]
    took = math.floor(trace["duration_ms"] + 0.5)
    browser = Browser()
    try:
        browser.open(file_url(tmp_path / "r.html"))
        line = "document.getElementById('case-trace')"
        for name in ("paris-and-rome", "by-hand"):
            row = f"document.querySelector('.row.case[data-name={json.dumps(name)}]')"
            browser.evaluate(f"{row}.click()")
            assert browser.evaluate("document.getElementById('case-detail').dataset.name") == name
            if name == "by-hand":
                assert browser.evaluate(line) is None
                continue
            assert browser.evaluate(f"{line}.textContent") == (
                f"trace {trace['id']}: model gpt-test, tokens 200 in / 40 out, {took} ms, "
                "error spans 0"
            )
            # The line comes first in the case's view: before its metadata and turns.
            assert browser.evaluate(f"{line}.previousElementSibling.className") == "facts"
    finally:
        browser.close()
