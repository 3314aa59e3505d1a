"""The Markdown summary for pull requests, from real runs, rendered by markdown-it-py (CommonMark
with GitHub's tables): each failing case in a <details> block with its messages and sample,
names and messages that read back exactly, and a size that never passes GitHub's limit."""

from __future__ import annotations

import json
from pathlib import Path

import sample_reports
from cli_support import Run
from lxml import html
from markdown_it import MarkdownIt

from gradekit.report import render_markdown
from gradekit.report.markdown import MAX_BYTES, MAX_LISTED
from gradekit.report.model import CaseReport, SuiteReport


def _render(text: str) -> html.HtmlElement:
    return html.fromstring(
        "<div>" + MarkdownIt("commonmark").enable("table").render(text) + "</div>"
    )


def _blocks(page: html.HtmlElement) -> list[html.HtmlElement]:
    """Each <details> block with what follows it up to </details> (markdown-it renders the
    HTML lines as they are and the Markdown between them as siblings)."""
    text = html.tostring(page, encoding="unicode")
    parts = text.split("<details>")[1:]
    return [
        html.fromstring("<div><details>" + part.split("</details>")[0] + "</details></div>")
        for part in parts
    ]


def test_each_failing_case_in_a_details_block_with_its_sample(tmp_path: Path) -> None:
    suite = sample_reports.agent_suite(tmp_path)
    report = sample_reports.run(suite)
    text = render_markdown(report, sample_reports.as_reports(sample_reports.with_tags(report)))
    page = _render(text)
    blocks = _blocks(page)
    summaries = [block.find(".//summary").text_content() for block in blocks]
    assert summaries == [
        "❌ refund: failed",
        "⚠️ crash: errored",
        "⚠️ stops-early: errored",
        "❌ transcript-refund: failed",
        "❌ nasty <b>&amp;</b> `name` *bold*: failed",
    ]
    refund = blocks[0]
    assert [code.text_content() for code in refund.xpath(".//li/code")] == [
        "turn 0: behavior failed: 0/1 checks passed; failed: forbidden tool issue_refund: "
        "called: issue_refund"
    ]
    assert [pre.text_content() for pre in refund.xpath(".//pre/code")] == [
        "Refund order A17 (500 EUR)\n",
        "Refunded <b>500</b> & done\n",
        "refused: over the limit\n",
        '1. lookup_order {"order": "A17"} -> {"total": 500}\n'
        '2. issue_refund {"order": "A17", "amount": 500} error: PermissionError: over the refund '
        "limit\n",
    ]
    # No markup from the data reached the page: its only <b> are the summaries' names.
    assert len(page.xpath("//b")) == len(blocks)
    assert not page.xpath("//script")
    nasty = blocks[-1].xpath(".//pre/code")[0].text_content()
    assert nasty == (
        sample_reports.NASTY.replace("\x00", "\\x00")
        .replace("\x07", "\\x07")
        .replace("\x1b", "\\x1b")
        .replace("\x0b", "\\x0b")
        .replace("\x0c", "\\x0c")
        .replace("\ufffe", "\\ufffe")
        .replace("\uffff", "\\uffff")
        .replace("\x7f", "\\x7f")
        + "\n"
    )


def test_backticks_and_stars_in_names_and_messages_survive(
    gradekit: Run, write, tmp_path: Path
) -> None:
    name = "weird `tick` *star* _under_ |pipe| <b>&amp; ``two``"
    write(
        "d.jsonl",
        json.dumps({"name": name, "output": "`a` *b* | <i>", "expected": "x"}) + "\n",
    )
    write(
        "suite.yaml",
        'name: "suite *x* `y`"\n'
        'graders: [{kind: equality, name: "eq *1* `g`"}]\n'
        "dataset: d.jsonl\n",
    )
    done = gradekit("run", "suite.yaml", "--markdown", "r.md", "--quiet")
    assert done.returncode == 1, done.stderr
    page = _render((tmp_path / "r.md").read_text())
    assert page.find(".//h2").text_content() == "gradekit: suite *x* `y` ❌ failed"
    cells = [cell.text_content() for cell in page.xpath("//table[2]//tbody//td[1]")]
    assert cells == ["eq *1* `g`"]
    (block,) = _blocks(page)
    assert block.find(".//summary").text_content() == f"❌ {name}: failed"
    (message,) = block.xpath(".//li/code")
    assert message.text_content() == "turn 0: eq *1* `g` failed: expected 'x', got '`a` *b* | <i>'"
    # No emphasis from the data: the one bold text is the writer's head of the turn's sample.
    assert not page.xpath("//em | //i | //table[3]")
    assert [bold.text_content() for bold in page.xpath("//strong")] == ["turn 0"]
    assert [code.text_content() for code in block.xpath(".//pre/code")] == [
        "`a` *b* | <i>\n",
        "x\n",
    ]


def test_the_summary_stays_under_the_limit_for_any_run(
    gradekit: Run, write, tmp_path: Path
) -> None:
    huge = "<&`*" * 25_000  # 100,000 characters in every output and in every case's name
    lines = [
        json.dumps({"name": f"{i:03d} {huge}", "output": huge, "expected": "x"}) for i in range(120)
    ]
    write("d.jsonl", "\n".join(lines) + "\n")
    write("suite.yaml", "name: big\ngraders: [{kind: equality}]\ndataset: d.jsonl\n")
    done = gradekit("run", "suite.yaml", "--markdown", "r.md", "-o", "r.json", "--quiet")
    assert done.returncode == 1, done.stderr
    text = (tmp_path / "r.md").read_text()
    assert len(text.encode()) <= MAX_BYTES
    assert len(_blocks(_render(text))) == MAX_LISTED
    assert text.endswith(f"… and {120 - MAX_LISTED} more not listed\n")
    # With its samples too, and at a pull request comment's size.
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    for case in cases:
        case["turns"][0]["output"] = huge
        case["turns"][0]["expected"] = "x"
    suite_report = SuiteReport("big", tuple(CaseReport.from_dict(c) for c in cases))
    listed = []
    for limit in (MAX_BYTES, 65_000, 5_000, 1_000):
        text = render_markdown(suite_report, sample_reports.as_reports(cases), max_bytes=limit)
        assert len(text.encode()) <= limit
        listed.append(len(_blocks(_render(text))))
        assert text.endswith(f"… and {120 - listed[-1]} more not listed\n")
    assert listed[0] == MAX_LISTED and MAX_LISTED > listed[1] > listed[2] > 0 and listed[3] == 0
