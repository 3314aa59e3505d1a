"""The HTML viewer's search inside inputs and outputs, its metadata and tag filters and its
token / cost / agent-time columns, on a real run (gradekit.run_suite) in a real headless
Chromium: typed into the toolbar and read from the page address."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from chromium import Browser, chromium, file_url

import gradekit
from gradekit.report import write_html, write_json

VISIBLE = (
    "Array.from(document.querySelectorAll('#rows .row.case')).filter(r => !r.hidden)"
    ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
    ".map(r => r.dataset.name)"
)
SHOWN = "document.getElementById('shown').textContent"

SUITE = """
name: usage
cases:
  - name: paris
    input: "What's the weather in PARIS?"
    output: "Sunny, 18 degrees."
    tags: [smoke]
    metadata: {model: gpt-4o, trace: {input_tokens: 1200, output_tokens: 34, duration_ms: 2500}}
    graders: [{kind: contains, values: [Sunny]}]
  - name: refund
    input: "Refund order A17"
    output: "I cannot refund <b>A17</b>: over the limit"
    expected: "refused"
    tags: [money, smoke]
    metadata: {model: claude, total_tokens: 90, cost: 0.0125, duration_ms: 800}
    graders: [{kind: contains, values: [refused]}]
  - name: plain
    input: {question: "sum", numbers: [4, 5]}
    output: "9"
    expected: "9"
    metadata: {model: gpt-4o, run_id: "r-1"}
    graders: [{kind: equality}]
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chromium()
    folder = tmp_path_factory.mktemp("search")
    (folder / "suite.yaml").write_text(textwrap.dedent(SUITE))
    report = gradekit.run_suite(gradekit.load_suite(folder / "suite.yaml"))
    assert [case.outcome for case in report.cases] == ["pass", "fail", "pass"]
    write_html(report, folder / "report.html")
    return folder / "report.html"


def _type(browser: Browser, element: str, value: str, event: str = "input") -> None:
    browser.evaluate(
        f"(e => {{ e.value = {json.dumps(value)};"
        f" e.dispatchEvent(new Event({json.dumps(event)})) }})"
        f"(document.getElementById({json.dumps(element)}))"
    )


def test_search_inside_inputs_outputs_and_expected(page: Path, browser: Browser) -> None:
    browser.open(file_url(page))
    assert browser.evaluate(SHOWN) == "3 of 3 cases shown"
    _type(browser, "search", "paris")  # in an input, another case
    assert browser.evaluate(VISIBLE) == ["paris"]
    assert browser.evaluate(SHOWN) == "1 of 3 cases shown"
    assert browser.evaluate("location.hash") == "#search=paris"
    _type(browser, "search", "<B>A17</b>")  # markup in an output, as text, any case
    assert browser.evaluate(VISIBLE) == ["refund"]
    _type(browser, "search", "REFUSED")  # the expected answer
    assert browser.evaluate(VISIBLE) == ["refund"]
    _type(browser, "search", '"numbers"')  # a structured input, as its JSON
    assert browser.evaluate(VISIBLE) == ["plain"]
    _type(browser, "search", "gpt-4o")  # metadata is not searched: its own filter
    assert browser.evaluate(VISIBLE) == []
    assert browser.evaluate(SHOWN) == "0 of 3 cases shown"
    # From the address, with the name filter too.
    browser.open(file_url(page) + "#search=a17&filter=re*")
    assert browser.evaluate(VISIBLE) == ["refund"]
    assert browser.evaluate("document.getElementById('search').value") == "a17"
    browser.open(file_url(page) + "#search=a17&filter=p*")
    assert browser.evaluate(VISIBLE) == []


def test_metadata_and_tag_filters(page: Path, browser: Browser) -> None:
    browser.open(file_url(page))
    groups = browser.evaluate(
        "Array.from(document.querySelectorAll('#meta optgroup')).map(g => "
        "[g.label, Array.from(g.children).map(o => o.textContent)])"
    )
    assert groups == [
        ["cost", ["cost = 0.0125"]],
        ["duration_ms", ["duration_ms = 800"]],
        ["model", ["model = claude", "model = gpt-4o"]],
        ["run_id", ["run_id = r-1"]],
        ["total_tokens", ["total_tokens = 90"]],
        ["trace.duration_ms", ["trace.duration_ms = 2500"]],
        ["trace.input_tokens", ["trace.input_tokens = 1200"]],
        ["trace.output_tokens", ["trace.output_tokens = 34"]],
    ]
    _type(browser, "meta", "model=gpt-4o", "change")
    assert browser.evaluate(VISIBLE) == ["paris", "plain"]
    assert browser.evaluate("location.hash") == "#meta=model%3Dgpt-4o"
    _type(browser, "tag", "smoke", "change")  # metadata and tag together
    assert browser.evaluate(VISIBLE) == ["paris"]
    browser.open(file_url(page) + "#tag=smoke&sort=name")
    assert browser.evaluate(VISIBLE) == ["paris", "refund"]
    browser.open(file_url(page) + "#meta=model%3Dnone")  # a pair no case has
    assert browser.evaluate(VISIBLE) == []
    assert "(not in this report)" in browser.evaluate(
        "document.getElementById('meta').selectedOptions[0].textContent"
    )


def test_token_cost_and_agent_time_columns(page: Path, browser: Browser) -> None:
    browser.open(file_url(page) + "#sort=name")
    browser.resize(1400, 900)
    head = browser.evaluate(
        "Array.from(document.querySelectorAll('.row.head span')).map(s => s.textContent)"
    )
    assert head == [
        "Outcome",
        "Case",
        "Score",
        "Turns",
        "Time",
        "Tokens",
        "Cost",
        "Agent time",
        "Not passed",
    ]
    cells = browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#rows .row.case'))"
        ".filter(r => !r.hidden).map(r => [r.dataset.name, "
        "['tok', 'cost', 'ams'].map(c => r.querySelector('.c-' + c).textContent)]))"
    )
    assert cells == {
        "paris": ["1,234", "", "2.50 s"],
        "refund": ["90", "0.0125", "800.0 ms"],
        "plain": ["", "", ""],
    }
    # Each column lies under its header.
    lefts = browser.evaluate(
        "['.row.head span:nth-child(6)', '.row.case[data-name=paris] .c-tok']"
        ".map(s => Math.round(document.querySelector(s).getBoundingClientRect().right))"
    )
    assert lefts[0] == lefts[1]
    browser.open(file_url(page) + "#sort=-tokens")
    assert browser.evaluate(VISIBLE) == ["paris", "refund", "plain"]  # none last
    browser.open(file_url(page) + "#sort=-cost")
    assert browser.evaluate(VISIBLE)[0] == "refund"


def test_without_usage_or_metadata_no_column_nor_menu(tmp_path: Path, browser: Browser) -> None:
    (tmp_path / "suite.yaml").write_text(
        "name: bare\ncases:\n  - {name: a, output: x, expected: x, graders: [{kind: equality}]}\n"
    )
    report = gradekit.run_suite(gradekit.load_suite(tmp_path / "suite.yaml"))
    write_html(report, tmp_path / "bare.html")
    browser.open(file_url(tmp_path / "bare.html"))
    assert browser.evaluate("document.querySelectorAll('.row.head span').length") == 6
    assert browser.evaluate("document.getElementById('meta').hidden") is True
    hidden = browser.evaluate(
        "Array.from(document.getElementById('sort').options).filter(o => o.hidden)"
        ".map(o => o.value)"
    )
    assert hidden == ["-tokens", "-cost", "-agent"]
    _type(browser, "search", "x")
    assert browser.evaluate(VISIBLE) == ["a"]


BEFORE = """
name: drift
graders: [{kind: equality}]
cases:
  - {name: stays, output: "a", expected: "a"}
  - {name: breaks, output: "b", expected: "b"}
  - {name: mends, output: "x", expected: "c"}
"""
AFTER = BEFORE.replace('output: "b"', 'output: "B!"').replace('output: "x"', 'output: "c"')

BASE_SIDE = (
    "Array.from(document.querySelectorAll('#case-detail .vs-baseline .side')).map(s => "
    "[s.className, s.querySelector('h4 .badge').textContent, "
    "(s.querySelector('.field-output pre') || s.querySelector('.no-sample')).textContent])"
)


def _open_case(browser: Browser, page: Path, name: str) -> None:
    browser.open(file_url(page))
    browser.evaluate(f"document.querySelector('.row.case[data-name={json.dumps(name)}]').click()")
    assert browser.evaluate("document.getElementById('case-detail').dataset.name") == name


def test_the_baseline_answer_beside_a_regressed_or_fixed_case(
    tmp_path: Path, browser: Browser
) -> None:
    (tmp_path / "before.yaml").write_text(BEFORE)
    (tmp_path / "after.yaml").write_text(AFTER)
    base = gradekit.run_suite(gradekit.load_suite(tmp_path / "before.yaml"))
    write_json(base, tmp_path / "base.json")
    after = gradekit.load_suite(tmp_path / "after.yaml")
    report = gradekit.run_suite(
        after, statistics=gradekit.Statistics(baseline=str(tmp_path / "base.json"))
    )
    write_html(report, tmp_path / "new.html")
    _open_case(browser, tmp_path / "new.html", "breaks")
    assert browser.evaluate(BASE_SIDE) == [
        ["side baseline-side", "passed", "b"],
        ["side new-side", "failed", "B!"],
    ]
    # The baseline's verdicts under its answer.
    assert browser.evaluate(
        "Array.from(document.querySelectorAll('.baseline-side .result'))"
        ".map(r => r.dataset.grader + ' ' + r.className)"
    ) == ["equality result pass"]
    _open_case(browser, tmp_path / "new.html", "mends")
    assert browser.evaluate(BASE_SIDE) == [
        ["side baseline-side", "failed", "x"],
        ["side new-side", "passed", "c"],
    ]
    _open_case(browser, tmp_path / "new.html", "stays")  # unchanged: nothing beside
    assert browser.evaluate(BASE_SIDE) == []
    assert browser.evaluate("document.getElementById('baseline-missing')") is None
    # A baseline report written without samples: its verdicts, and a word for the output.
    write_json(
        gradekit.run_suite(
            gradekit.load_suite(tmp_path / "before.yaml"),
            outputs=gradekit.Outputs(samples=False),
        ),
        tmp_path / "bare.json",
    )
    report = gradekit.run_suite(
        after, statistics=gradekit.Statistics(baseline=str(tmp_path / "bare.json"))
    )
    write_html(report, tmp_path / "bare.html")
    _open_case(browser, tmp_path / "bare.html", "breaks")
    side = browser.evaluate(BASE_SIDE)
    assert side[0][:2] == ["side baseline-side", "passed"]
    assert side[0][2].startswith("The baseline report carries no output for this turn")
    # A baseline given as report objects (no file to read back): the page says so.
    report = gradekit.run_suite(after, statistics=gradekit.Statistics(baseline=base))
    write_html(report, tmp_path / "objects.html")
    _open_case(browser, tmp_path / "objects.html", "breaks")
    assert browser.evaluate(BASE_SIDE) == []
    assert browser.evaluate("document.getElementById('baseline-missing').textContent").startswith(
        "The baseline's answer is not in this page"
    )


def test_a_metadata_key_of_too_many_values_is_no_filter(tmp_path: Path, browser: Browser) -> None:
    lines = [
        json.dumps(
            {
                "name": f"c{i:03d}",
                "output": "x",
                "expected": "x",
                "metadata": {"run_id": f"r-{i}", "model": ["a", "b"][i % 2], "long": "y" * 300},
            }
        )
        for i in range(150)
    ]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: many\ngraders: [{kind: equality}]\ndataset: d.jsonl\n"
    )
    report = gradekit.run_suite(gradekit.load_suite(tmp_path / "suite.yaml"))
    write_html(report, tmp_path / "many.html")
    browser.open(file_url(tmp_path / "many.html") + "#meta=model%3Db")
    options = browser.evaluate(
        "Array.from(document.querySelectorAll('#meta option')).map(o => o.value)"
    )
    assert options == ["", "model=a", "model=b"]  # no run_id (150 values), no long value
    assert browser.evaluate(SHOWN) == "75 of 150 cases shown"
    assert browser.evaluate(VISIBLE)[:3] == ["c001", "c003", "c005"]
