"""The HTML viewer of a run with many attempts per case, in a real headless Chromium: each
attempt is a row of its own, and the case header shows the pass@k of the attempt's case."""

from __future__ import annotations

import json
from pathlib import Path

from chromium import Browser, chromium, file_url

from gradekit import Statistics, load_suite, run_suite
from gradekit.report import write_html

SUITE = """name: attempts
graders: [{kind: equality}]
cases:
  - name: add
    expected: "4"
    attempts: ["4", "5", "4", "4"]
  - name: single
    output: ok
    expected: ok
"""


def test_the_case_header_shows_the_pass_at_k_of_its_case(tmp_path: Path) -> None:
    chromium()
    (tmp_path / "suite.yaml").write_text(SUITE)
    report = run_suite(load_suite(tmp_path / "suite.yaml"), statistics=Statistics(k=(1, 2)))
    page = tmp_path / "report.html"
    write_html(report, page)
    browser = Browser()
    try:
        browser.open(file_url(page))
        line = browser.evaluate("document.getElementById('pass-at-k-line').textContent")
        assert line.startswith("pass@k over 1 case of several attempts (4 attempts, 0 errored)")
        names = browser.evaluate(
            "Array.from(document.querySelectorAll('.row.case')).map(r => r.dataset.name)"
        )
        assert sorted(names) == [*(f"add [attempt {i}]" for i in range(4)), "single"]
        row = f"document.querySelector('.row.case[data-name={json.dumps('add [attempt 1]')}]')"
        browser.evaluate(f"{row}.click()")
        detail = "document.getElementById('case-detail')"
        assert browser.evaluate(f"{detail}.querySelector('h2').textContent") == "add [attempt 1]"
        header = browser.evaluate("document.getElementById('case-pass-at-k').textContent")
        assert header == (
            "This case's attempts: 4 attempts, 0 errored, 3 passed: pass@1 75.0% pass^1 75.0% "
            "| pass@2 100.0% pass^2 50.0%"
        )
        single = f"document.querySelector('.row.case[data-name={json.dumps('single')}]')"
        browser.evaluate(f"{single}.click()")
        assert browser.evaluate("document.getElementById('case-pass-at-k')") is None
    finally:
        browser.close()
