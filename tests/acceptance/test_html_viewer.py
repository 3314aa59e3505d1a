"""The HTML viewer on a real run's report, whose turns carry their samples (tags moved from
the metadata by `sample_reports.with_tags`), in a real headless Chromium: each grader's verdict
beside the sample it judged, tool calls as a timeline, transcripts as chat bubbles, tags,
errored cases without a score, hostile text shown as text; screenshots of each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sample_reports
from chromium import Browser, chromium, file_url
from cli_support import Run

from gradekit.report import write_html

DETAIL = "document.getElementById('case-detail')"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chromium()
    folder = tmp_path_factory.mktemp("viewer")
    suite = sample_reports.agent_suite(folder)
    report = sample_reports.run(suite)
    assert [case.outcome for case in report.cases] == [
        "pass",
        "fail",
        "error",
        "error",
        "fail",
        "fail",
    ]
    write_html(
        report,
        folder / "report.html",
        cases=sample_reports.as_reports(sample_reports.with_tags(report)),
    )
    return folder / "report.html"


def _open(browser: Browser, page: Path, name: str, shots: Path | None = None) -> None:
    """Open `page`, click the row of case `name`, and wait for its detail."""
    browser.open(file_url(page))
    browser.resize(1400, 1000)
    row = f"document.querySelector('.row.case[data-name={json.dumps(name)}]')"
    browser.evaluate(f"{row}.click()")
    assert browser.evaluate(f"{DETAIL}.dataset.name") == name
    if shots is not None:
        shot = browser.screenshot(shots / (re.sub("[^a-z0-9-]+", "_", name)[:30] + ".png"))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def _texts(browser: Browser, selector: str) -> list[str]:
    return browser.evaluate(
        f"Array.from({DETAIL}.querySelectorAll({json.dumps(selector)})).map(e => e.textContent)"
    )


def test_the_sample_beside_each_verdict_and_the_tool_call_timeline(
    page: Path, browser: Browser, tmp_path: Path
) -> None:
    _open(browser, page, "refund", tmp_path)
    assert _texts(browser, ".field-input pre") == ["Refund order A17 (500 EUR)"]
    assert _texts(browser, ".field-output pre") == ["Refunded <b>500</b> & done"]
    assert _texts(browser, ".field-expected pre") == ["refused: over the limit"]
    # The turn's grid: the sample on the left, the verdicts on the right, side by side.
    sides = browser.evaluate(
        f"Array.from({DETAIL}.querySelector('.turn-grid').children)"
        ".map(e => [e.className, Math.round(e.getBoundingClientRect().top)])"
    )
    assert [name for name, _ in sides] == ["sample", "verdicts"] and sides[0][1] == sides[1][1]
    calls = browser.evaluate(
        f"Array.from({DETAIL}.querySelectorAll('ol.timeline > li')).map(li => ["
        "li.querySelector('.tool').textContent, li.className, "
        "Array.from(li.querySelectorAll('.kv')).map(kv => kv.innerText.replace(/\\s+/g, ' '))])"
    )
    assert calls == [
        ["lookup_order", "call", ['arguments {"order":"A17"}', 'result {"total":500}']],
        [
            "issue_refund",
            "call failed",
            [
                'arguments {"order":"A17","amount":500}',
                "error PermissionError: over the refund limit",
            ],
        ],
    ]
    assert _texts(browser, "ol.timeline .chip") == ["agent turn 0", "agent turn 1"]
    verdicts = browser.evaluate(
        f"Array.from({DETAIL}.querySelectorAll('.verdicts li.result')).map(li => "
        "[li.dataset.grader, li.querySelector('.badge').textContent])"
    )
    assert verdicts == [["behavior", "failed"], ["polite", "failed"]]
    assert _texts(browser, ".verdicts .advisory") == ["advisory"]
    assert _texts(browser, ".tags .chip") == ["smoke", "money"]
    # details as a tree: the behavior grader's checks, folded and unfolded.
    tree = browser.evaluate(f"{DETAIL}.querySelector('.verdicts .details').innerText")
    assert "checks" in tree and "forbidden tool issue_refund" in tree


def test_a_transcript_as_chat_bubbles(page: Path, browser: Browser, tmp_path: Path) -> None:
    _open(browser, page, "transcript-refund", tmp_path)
    bubbles = browser.evaluate(
        f"Array.from({DETAIL}.querySelectorAll('section.turn')).map(turn => "
        "Array.from(turn.querySelectorAll('.bubble')).map(b => [b.className.split(' ')[1], "
        "b.querySelector('.who').textContent, (b.querySelector('.content') || {}).textContent || "
        "'', Array.from(b.querySelectorAll('.tool-request .tool')).map(t => t.textContent)]))"
    )
    assert bubbles == [
        [
            ["role-system", "system", "You are a support agent. Be brief.", []],
            ["role-user", "user", "Where is my order A17?", []],
            ["role-assistant", "assistant", "", ["lookup_order"]],
            ["role-tool", "tool · call_1", '{"status": "shipped"}', []],
            ["role-assistant", "assistant", "Your order A17 has shipped.", []],
        ],
        [
            ["role-user", "user", "Thanks! Can I get a refund anyway?", []],
            ["role-assistant", "assistant", "Sure, refunds are always possible.", []],
        ],
    ]
    # The user's bubbles sit on the right, the assistant's on the left.
    sides = browser.evaluate(
        f"['user', 'assistant'].map(r => {DETAIL}.querySelector('.role-' + r)"
        ".getBoundingClientRect())"
        ".map(box => Math.round(box.left))"
    )
    assert sides[0] > sides[1]
    assert "ticket: 4411" in browser.evaluate(f"{DETAIL}.querySelector('.metadata').innerText")


def test_an_errored_case_shows_no_score(page: Path, browser: Browser) -> None:
    _open(browser, page, "stops-early")
    assert _texts(browser, ".facts > span")[:2] == ["errored", "errored: no score"]
    heads = _texts(browser, "section.turn > h3")
    assert heads == ["Turn 0 errored", "Turn 1 skipped"]
    assert "Not run: an earlier error ended the case" in _texts(browser, "section.turn p.muted")[0]
    result = browser.evaluate(f"{DETAIL}.querySelector('li.result.error .result-head').innerText")
    assert "score" not in result
    assert _texts(browser, "li.result.error pre.error-text") == ["ValueError: no luck <&>"]
    row = "document.querySelector('.row.case[data-name=\"stops-early\"] .c-score')"
    assert browser.evaluate(f"{row}.textContent") == "no score"


def test_hostile_text_is_shown_as_text(page: Path, browser: Browser, tmp_path: Path) -> None:
    name = "nasty <b>&amp;</b> `name` *bold*"
    _open(browser, page, name, tmp_path)
    assert browser.evaluate("window.pwned") is None
    # No markup came from the data: the page's own scripts and the data blocks only.
    assert browser.evaluate(
        "Array.from(document.scripts)"
        ".every(s => s.id.startsWith('gk-') || s.textContent.includes('GK'))"
    )
    injected = "#case-detail b:not(.grader-name), #case-detail script, #rows b, #rows script"
    assert browser.evaluate(f"document.querySelectorAll({json.dumps(injected)}).length") == 0
    assert browser.evaluate(f"{DETAIL}.querySelector('h2').textContent") == name
    shown = browser.evaluate(f"{DETAIL}.querySelector('.field-output pre').textContent")
    # Control characters show as their escapes, marked out; everything else as it is.
    expected = (
        sample_reports.NASTY.replace("\x00", "\\x00")
        .replace("\x07", "\\x07")
        .replace("\x1b", "\\x1b")
        .replace("\x0b", "\\x0b")
        .replace("\x0c", "\\x0c")
        .replace("\ufffe", "\\ufffe")
        .replace("\uffff", "\\uffff")
        .replace("\x7f", "\\x7f")
    )
    assert shown == expected
    assert _texts(browser, ".field-output pre .ctl")[:3] == ["\\x00", "\\x07", "\\x1b"]


def test_tag_and_grader_filters(page: Path, browser: Browser) -> None:
    browser.open(file_url(page) + "#tag=money")
    assert browser.evaluate("document.getElementById('shown').textContent") == "1 of 6 cases shown"
    assert browser.evaluate("document.querySelector('.row.case:not([hidden])').dataset.name") == (
        "refund"
    )
    browser.open(file_url(page) + "#grader=explode&outcome=error")
    assert browser.evaluate("document.getElementById('shown').textContent") == (
        "2 of 6 cases shown (where explode errored)"
    )


def test_a_large_run_draws_only_the_rows_on_screen(
    gradekit: Run, write, tmp_path: Path, browser: Browser
) -> None:
    count = 3000
    lines = [
        json.dumps({"name": f"case-{i:05d}", "output": str(i % 7), "expected": "0"})
        for i in range(count)
    ]
    write("d.jsonl", "\n".join(lines) + "\n")
    write("suite.yaml", "name: many\ngraders: [{kind: equality}]\ndataset: d.jsonl\n")
    done = gradekit("run", "suite.yaml", "--html", "r.html", "--quiet")
    assert done.returncode == 1, done.stderr
    browser.open(file_url(tmp_path / "r.html"))
    browser.resize(1200, 800)
    assert browser.evaluate("document.getElementById('shown').textContent") == (
        "3,000 of 3,000 cases shown"  # numbers with thousands separators
    )
    boxes = "document.getElementById('summary').innerText.replace(/\\s+/g, ' ')"
    assert browser.evaluate(boxes).startswith("3,000 cases 429 passed 2,571 failed 0 errored")
    drawn = "document.querySelectorAll('#rows .row.case:not([hidden])').length"
    assert 10 < browser.evaluate(drawn) < 80
    first = "document.querySelector('.row.case:not([hidden])').dataset.name"
    assert browser.evaluate(first) == "case-00001"  # failures first
    # Scrolled to the end: the last passing case is drawn, still only a screenful of rows.
    browser.evaluate("const l = document.getElementById('list'); l.scrollTop = l.scrollHeight")
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    names = browser.evaluate(
        "Array.from(document.querySelectorAll('.row.case:not([hidden])')).map(r => r.dataset.name)"
    )
    assert "case-02996" in names and len(names) < 80
    browser.evaluate("document.querySelector('.row.case[data-name=\"case-02996\"]').click()")
    assert browser.evaluate(f"{DETAIL}.dataset.name") == "case-02996"
    assert "output equals expected '0'" in browser.evaluate(f"{DETAIL}.innerText")
