"""The HTML report of `gradekit run --baseline` in a real headless Chromium: the counts of
each mark link to the cases that have it, the viewer filters on the mark from the address and
from its menu, keeps that in the address, and shows each case's mark in its row and detail."""

from __future__ import annotations

import json
from pathlib import Path

from baseline_runs import MARKS, change
from chromium import Browser, file_url
from cli_support import Run

VISIBLE = (
    "Array.from(document.querySelectorAll('#rows .row.case')).filter(r => !r.hidden)"
    ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
    ".map(r => r.dataset.name)"
)


def test_the_viewer_filters_on_the_baseline_mark(
    tmp_path: Path, gradekit: Run, browser: Browser
) -> None:
    change(tmp_path, gradekit)
    done = gradekit("run", "suite.yaml", "-q", "--baseline", "base.json", "--html", "new.html")
    assert done.returncode == 1, done.stderr
    page = file_url(tmp_path / "new.html")

    def rows(address: str) -> list[str]:
        browser.open(page + address)
        return browser.evaluate(VISIBLE)

    assert rows("#baseline=regressed") == ["breaks", "stricter"]
    assert rows("#baseline=new") == ["erring", "arrives"]  # failures and errors first
    assert rows("#baseline=fixed&sort=name") == ["mends"]
    assert rows("#baseline=unchanged&outcome=fail") == ["still-bad"]
    assert browser.evaluate("document.getElementById('baseline').value") == "unchanged"
    assert sorted(rows("")) == sorted(MARKS)
    # Each row carries its mark; the unchanged ones show none.
    marks = browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#rows .row.case'))"
        ".filter(r => !r.hidden).map(r => [r.dataset.name, [r.dataset.baseline, "
        "r.querySelector('.c-name .mark').textContent]]))"
    )
    assert marks == {
        name: [mark, "" if mark == "unchanged" else mark] for name, mark in MARKS.items()
    }
    # The menu changes the list and the address.
    browser.evaluate(
        "const b = document.getElementById('baseline'); b.value = 'regressed';"
        "b.dispatchEvent(new Event('change'))"
    )
    assert browser.evaluate(VISIBLE) == ["breaks", "stricter"]
    assert browser.evaluate("location.hash") == "#baseline=regressed"
    # The summary's counts link to the list filtered on the mark.
    browser.open(page)
    counts = browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#baseline-counts .count'))"
        ".map(c => [c.id, c.innerText.replace(/\\s+/g, ' ')]))"
    )
    assert counts["count-regressed"] == "2 regressed"
    assert counts["count-removed"] == "1 removed"
    browser.evaluate("document.querySelector('#count-fixed a').click()")
    assert browser.evaluate(VISIBLE) == ["mends"]
    # A case's detail says its mark.
    browser.evaluate("document.querySelector('.row.case[data-name=\"mends\"]').click()")
    facts = browser.evaluate("document.querySelector('#case-detail .facts .mark').textContent")
    assert facts == "fixed against the baseline"


def test_without_a_baseline_the_menu_is_hidden(
    tmp_path: Path, gradekit: Run, browser: Browser
) -> None:
    change(tmp_path, gradekit)
    assert gradekit("run", "suite.yaml", "-q", "--html", "plain.html").returncode == 1
    browser.open(file_url(tmp_path / "plain.html"))
    assert browser.evaluate("document.getElementById('baseline').hidden") is True
    assert browser.evaluate("document.getElementById('baseline-counts')") is None
    assert len(browser.evaluate(VISIBLE)) == len(MARKS)
    text = (tmp_path / "plain.html").read_text()
    index = json.loads(text.split('id="gk-index">', 1)[1].split("</script>", 1)[0])
    assert "baseline" not in index
