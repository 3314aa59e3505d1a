"""The HTML report in a real headless Chromium: it loads, shows the counts, and filters."""

from __future__ import annotations

import re
from collections.abc import Iterator
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


def _visible_rows(dom: str) -> list[tuple[str, str]]:
    page = html.fromstring(dom)
    return [
        (row.get("data-name"), row.get("data-outcome"))
        for row in page.xpath("//table[@id='cases']//tr[@class='case']")
        if row.get("hidden") is None
    ]


def test_page_is_self_contained(report: Path) -> None:
    text = report.read_text()
    assert not re.search(r"<(link|img|iframe)\b", text)
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert "http://" not in text and "https://" not in text


def test_page_loads_and_shows_the_counts(report: Path) -> None:
    dom = dump_dom(file_url(report))
    page = html.fromstring(dom)
    assert page.find("body").get("data-ready") == "true"  # the page's script ran
    counts = {
        key: page.get_element_by_id(f"count-{key}").text_content()
        for key in ("cases", "passed", "failed", "errored")
    }
    assert counts == {
        "cases": "4 cases",
        "passed": "2 passed",
        "failed": "1 failed",
        "errored": "1 errored",
    }
    assert page.get_element_by_id("shown").text_content() == "4 of 4 cases shown"
    assert _visible_rows(dom) == [
        ("good", "pass"),
        ("bad", "fail"),
        ("broken", "error"),
        ("two-turns", "pass"),
    ]


def test_filter_from_the_address(report: Path) -> None:
    dom = dump_dom(file_url(report) + "#filter=b*")
    assert _visible_rows(dom) == [("bad", "fail"), ("broken", "error")]
    assert html.fromstring(dom).get_element_by_id("shown").text_content() == "2 of 4 cases shown"
    dom = dump_dom(file_url(report) + "?outcome=error")
    assert _visible_rows(dom) == [("broken", "error")]


@pytest.fixture
def browser() -> Iterator[Browser]:
    chromium()
    opened = Browser()
    try:
        yield opened
    finally:
        opened.close()


def test_typing_in_the_filter_and_choosing_an_outcome(report: Path, browser: Browser) -> None:
    browser.open(file_url(report))
    visible = (
        "Array.from(document.querySelectorAll('#cases tr.case'))"
        ".filter(r => !r.hidden).map(r => r.dataset.name).join(',')"
    )
    assert browser.evaluate(visible) == "good,bad,broken,two-turns"
    browser.evaluate(
        "const f = document.getElementById('filter'); f.value = 'TWO';"
        "f.dispatchEvent(new Event('input'))"
    )
    assert browser.evaluate(visible) == "two-turns"
    assert browser.evaluate("document.getElementById('shown').textContent") == (
        "1 of 4 cases shown"
    )
    assert browser.evaluate("location.hash") == "#filter=TWO"
    browser.evaluate(
        "const f2 = document.getElementById('filter'); f2.value = '';"
        "f2.dispatchEvent(new Event('input'));"
        "const o = document.getElementById('outcome'); o.value = 'fail';"
        "o.dispatchEvent(new Event('change'))"
    )
    assert browser.evaluate(visible) == "bad"


def test_turns_and_results_expand(report: Path, browser: Browser) -> None:
    browser.open(file_url(report))
    row = "document.querySelector('#cases tr.case[data-name=\"two-turns\"] details')"
    assert browser.evaluate(f"{row}.open") is False
    browser.evaluate(f"{row}.querySelector('summary').click()")
    assert browser.evaluate(f"{row}.open") is True
    text = browser.evaluate(f"{row}.innerText")
    assert "Turn 0" in text and "Turn 1" in text
    assert "polite" in text and "advisory" in text
