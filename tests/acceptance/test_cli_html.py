"""The HTML report of `gradekit run --html` in a real headless Chromium: it loads, shows the
counts, lists failures and errors first, filters and sorts from the page address and from
the controls, and opens a case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chromium import Browser, chromium, dump_dom, file_url
from cli_support import Run
from lxml import html


@pytest.fixture
def report(gradekit: Run, mixed_suite: Path, tmp_path: Path) -> Path:
    chromium()  # skip early (outside CI) when there is no browser
    done = gradekit("run", "suite.yaml", "--html", "report.html", "--quiet")
    assert done.returncode == 1, done.stderr
    return tmp_path / "report.html"


def _rows(dom: str) -> list[tuple[str, str]]:
    """The case rows the list shows, top to bottom: (name, outcome)."""
    page = html.fromstring(dom)
    rows = [
        row
        for row in page.xpath("//div[@id='rows']/div[contains(@class, 'case')]")
        if row.get("hidden") is None
    ]
    rows.sort(key=lambda row: int(re.search(r"translateY\((-?\d+)px\)", row.get("style"))[1]))
    return [(row.get("data-name"), row.get("data-outcome")) for row in rows]


def test_page_is_self_contained(report: Path) -> None:
    text = report.read_text()
    assert not re.search(r"<(link|img|iframe)\b", text)
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert "http://" not in text and "https://" not in text


def test_page_loads_and_lists_failures_and_errors_first(report: Path) -> None:
    dom = dump_dom(file_url(report))
    page = html.fromstring(dom)
    assert page.find("body").get("data-ready") == "true"  # the page's script ran
    counts = {
        key: " ".join(page.get_element_by_id(f"count-{key}").text_content().split())
        for key in ("cases", "passed", "failed", "errored")
    }
    assert counts == {
        "cases": "4 cases",
        "passed": "2 passed",
        "failed": "1 failed",
        "errored": "1 errored",
    }
    assert page.get_element_by_id("shown").text_content() == "4 of 4 cases shown"
    assert _rows(dom) == [
        ("bad", "fail"),
        ("broken", "error"),
        ("good", "pass"),
        ("two-turns", "pass"),
    ]
    # The errored case shows no score, never one that looks like a success or a failure.
    (broken,) = page.xpath("//div[@data-name='broken']")
    assert broken.find_class("c-score")[0].text_content() == "no score"
    assert broken.find_class("c-graders")[0].text_content() == "⚠ explode"


VISIBLE = (
    "Array.from(document.querySelectorAll('#rows .row.case')).filter(r => !r.hidden)"
    ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
    ".map(r => r.dataset.name).join(',')"
)


def test_filter_and_sort_from_the_address(report: Path, browser: Browser) -> None:
    def rows(address: str) -> list[str]:
        browser.open(file_url(report) + address)
        return browser.evaluate(VISIBLE).split(",")

    assert rows("#filter=b*") == ["bad", "broken"]
    assert rows("?outcome=error") == ["broken"]
    # "The failures of grader X": the grader's own outcome in each case.
    assert rows("#grader=numeric&outcome=fail") == ["bad"]
    assert rows("#grader=polite&outcome=fail") == ["two-turns"]
    assert rows("#grader=numeric") == ["bad", "good"]
    assert rows("#sort=-name") == ["two-turns", "good", "broken", "bad"]
    # Lowest score first; the errored case has none and goes last.
    assert rows("#sort=score") == ["bad", "good", "two-turns", "broken"]
    assert rows("#sort=suite") == ["good", "bad", "broken", "two-turns"]


def test_typing_in_the_filter_and_choosing_an_outcome(report: Path, browser: Browser) -> None:
    browser.open(file_url(report))
    assert browser.evaluate(VISIBLE) == "bad,broken,good,two-turns"
    browser.evaluate(
        "const f = document.getElementById('filter'); f.value = 'TWO';"
        "f.dispatchEvent(new Event('input'))"
    )
    assert browser.evaluate(VISIBLE) == "two-turns"
    assert browser.evaluate("document.getElementById('shown').textContent") == (
        "1 of 4 cases shown"
    )
    assert browser.evaluate("location.hash") == "#filter=TWO"
    browser.evaluate(
        "const f2 = document.getElementById('filter'); f2.value = '';"
        "f2.dispatchEvent(new Event('input'));"
        "const o = document.getElementById('outcome'); o.value = 'pass';"
        "o.dispatchEvent(new Event('change'));"
        "const s = document.getElementById('sort'); s.value = '-name';"
        "s.dispatchEvent(new Event('change'))"
    )
    assert browser.evaluate(VISIBLE) == "two-turns,good"
    assert browser.evaluate("location.hash") == "#outcome=pass&sort=-name"


def test_a_graders_failure_count_links_to_those_failures(report: Path, browser: Browser) -> None:
    browser.open(file_url(report))
    browser.evaluate(
        "Array.from(document.querySelectorAll('#graders tbody tr'))"
        ".find(row => row.cells[0].textContent === 'numeric').cells[2].querySelector('a').click()"
    )
    params = "Object.fromEntries(new URLSearchParams(location.hash.slice(1)))"
    assert browser.evaluate(params) == {"grader": "numeric", "outcome": "fail"}
    assert browser.evaluate(VISIBLE) == "bad"
    assert browser.evaluate("document.getElementById('grader').value") == "numeric"


def test_opening_a_case_shows_its_turns_and_results(report: Path, browser: Browser) -> None:
    browser.open(file_url(report))
    browser.evaluate("document.querySelector('.row.case[data-name=\"two-turns\"]').click()")
    assert browser.evaluate("location.hash") == "#case=two-turns"
    detail = "document.getElementById('case-detail')"
    assert browser.evaluate(f"{detail}.dataset.name") == "two-turns"
    turns = browser.evaluate(
        f"Array.from({detail}.querySelectorAll('section.turn')).map(t => t.dataset.turn)"
    )
    assert turns == ["0", "1"]
    text = browser.evaluate(f"{detail}.innerText")
    assert "polite" in text and "advisory" in text
    assert "missing 'please' in 'Lyon'" in text
    # Each turn beside the sample the run graded.
    outputs = browser.evaluate(
        f"Array.from({detail}.querySelectorAll('.field-output pre')).map(e => e.textContent)"
    )
    assert outputs == ["Paris", "Lyon"]
    # The arrows move through the list as it is shown (failures and errors first).
    for key, name in [("ArrowUp", "good"), ("ArrowUp", "broken"), ("ArrowDown", "good")]:
        browser.evaluate(
            "document.getElementById('list').dispatchEvent("
            f"new KeyboardEvent('keydown', {{key: '{key}', bubbles: true}}))"
        )
        assert browser.evaluate(f"{detail}.dataset.name") == name
    assert browser.evaluate("document.querySelector('.row.case.selected').dataset.name") == "good"
    # Opening from the address, as a shared link does.
    browser.open(file_url(report) + "#case=broken")
    assert browser.evaluate(f"{detail}.dataset.name") == "broken"
    assert browser.evaluate(f"{detail}.querySelector('.facts').innerText").split("\n")[:2] == [
        "errored",
        "errored: no score",
    ]
