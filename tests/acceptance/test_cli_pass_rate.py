"""The pass rate is passed / all cases in every report, and an errored case never shows a score
that reads as success (issue 11: nothing passes by accident)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from chromium import chromium, dump_dom, file_url
from cli_support import Run
from lxml import etree, html

# One case passes; three error. Each errored case also has a grader that passed (score 1.0), so
# the mean of its non-errored results is 1.0: the score an errored case must not show.
SUITE = """
    name: mostly-broken
    cases:
      - name: good
        output: "42"
        expected: "42"
        graders: [{kind: equality}]
      - name: broken-1
        output: "42"
        expected: "42"
        graders: [{kind: equality}, {kind: code, grader: "graders:explode"}]
      - name: broken-2
        output: "42"
        expected: "42"
        graders: [{kind: equality}, {kind: code, grader: "graders:explode"}]
      - name: broken-3
        turns:
          - {output: "42", expected: "42", graders: [{kind: equality}]}
          - output: "42"
            expected: "42"
            graders: [{kind: equality}, {kind: code, grader: "graders:explode"}]
"""

GRADERS = """
    def explode(ctx):
        raise ValueError("no luck")
"""


@pytest.fixture
def reports(gradekit: Run, write: Callable[[str, str], Path], tmp_path: Path) -> Path:
    write("graders.py", GRADERS)
    write("suite.yaml", SUITE)
    done = gradekit(
        "run", "suite.yaml", "-o", "r.json", "--markdown", "r.md", "--html", "r.html",
        "--junit", "r.xml",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    (tmp_path / "stdout.txt").write_text(done.stdout)
    (tmp_path / "stderr.txt").write_text(done.stderr)
    return tmp_path


def test_json_pass_rate_is_passed_over_all_cases(reports: Path) -> None:
    summary = json.loads((reports / "r.json").read_text())["summary"]
    assert (summary["cases"], summary["passed"], summary["errored"]) == (4, 1, 3)
    assert summary["pass_rate"] == 0.25


def test_console_shows_the_pass_rate_over_all_cases(reports: Path) -> None:
    stdout = (reports / "stdout.txt").read_text()
    stderr = (reports / "stderr.txt").read_text()
    table = stdout.split("graders")[0]
    header = next(line for line in table.splitlines() if "pass rate" in line)
    row = next(line for line in table.splitlines() if "25.0%" in line)
    # The rate over the graded cases sits beside it, labelled, never in its place.
    assert header.index("graded pass rate") > header.index("pass rate")
    assert row.index("100.0%") > row.index("25.0%")
    assert "(25.0% pass rate, 95% CI 4.6-69.9; 100.0% of the graded cases)" in stderr


def test_markdown_shows_the_pass_rate_over_all_cases(reports: Path) -> None:
    text = (reports / "r.md").read_text()
    assert "| 4 | 1 | 0 | 3 | 25.0% (95% CI 4.6-69.9) | 100.0% |" in text
    assert "Pass rate | Graded pass rate" in text


def test_html_pass_rate_and_errored_scores_in_chromium(reports: Path) -> None:
    chromium()
    page = html.fromstring(dump_dom(file_url(reports / "r.html")))
    assert page.get_element_by_id("pass-rate").text_content() == (
        "25.0% pass rate (95% CI 4.6-69.9)"
    )
    assert page.get_element_by_id("graded-pass-rate").text_content() == (
        "100.0% of the graded cases"
    )
    # The viewer draws its case list from the embedded data: read the rows it drew.
    rows = page.find_class("case")
    scores = {row.get("data-name"): row.find_class("c-score")[0].text_content() for row in rows}
    assert scores == {
        "good": "1.00",
        "broken-1": "no score",
        "broken-2": "no score",
        "broken-3": "no score",
    }
    # An opened errored case (its turns, its errored results) shows no score either:
    # tests/acceptance/test_html_viewer.py::test_an_errored_case_shows_no_score.


def test_junit_shows_no_score_for_errored_cases(reports: Path) -> None:
    tree = etree.parse(str(reports / "r.xml"))
    for case in tree.iter("testcase"):
        if case.get("name").startswith("broken"):
            text = etree.tostring(case, encoding="unicode")
            assert "score" not in text and "ValueError: no luck" in text


def _many(write: Callable[[str, str], Path], passing: int, failing: int) -> None:
    lines = [{"name": f"p{i}", "output": "a", "expected": "a"} for i in range(passing)]
    lines += [{"name": f"f{i}", "output": "a", "expected": "b"} for i in range(failing)]
    write("cases.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    write("suite.yaml", "name: many\ndataset: cases.jsonl\ngraders: [{kind: equality}]\n")


@pytest.mark.parametrize("counts", [(1999, 1, "99.9%", "99.7-99.9"), (1, 1999, "0.1%", "0.1-0.3")])
def test_a_rate_short_of_all_or_above_none_never_reads_as_all_or_none(
    gradekit: Run,
    write: Callable[[str, str], Path],
    tmp_path: Path,
    counts: tuple[int, int, str, str],
) -> None:
    passing, failing, shown, interval = counts
    # 1 case of 2,000 failing is 99.95% passed: not 100.0%, which reads as a passing run; 1 of
    # 2,000 passing is not 0.0%.
    _many(write, passing, failing)
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--markdown", "r.md", "--html", "r.html")
    assert done.returncode == 1, done.stderr
    for text in (done.stdout, (tmp_path / "r.md").read_text(), (tmp_path / "r.html").read_text()):
        assert "100.0%" not in text and "0.0%" not in text.replace("100.0%", "")
    # Its interval's bounds too (Wilson: 99.991% is 99.9, 0.009% is 0.1).
    assert f"({shown} pass rate, 95% CI {interval})" in done.stderr + done.stdout
    table = done.stdout.split("graders")[1]
    assert f" {shown} " in table  # the equality grader's rate
    row = f"| 2000 | {passing} | {failing} | 0 | {shown} (95% CI {interval}) |"
    assert row in (tmp_path / "r.md").read_text()
    page = html.fromstring((tmp_path / "r.html").read_text())
    assert page.get_element_by_id("pass-rate").text_content() == (
        f"{shown} pass rate (95% CI {interval})"
    )

    # Compared with a run that all passed: the change (-0.05 or -99.95 points) is neither 0.0
    # nor 100.0 points.
    write("cases.jsonl", json.dumps({"name": "p0", "output": "a", "expected": "a"}) + "\n")
    assert gradekit("run", "suite.yaml", "-q", "-o", "all.json").returncode == 0
    compared = gradekit("compare", "all.json", "r.json")
    # The change of the rates, before the paired figures of the one case in both runs.
    rates = compared.stdout.split(";")[0]
    assert f"pass rate 100.0% -> {shown} (" in rates
    assert "0.0 points" not in rates.replace("99.9 points", "")
    assert ("(-0.1 points)" if failing == 1 else "(-99.9 points)") in rates
