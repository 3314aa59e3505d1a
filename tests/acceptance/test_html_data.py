"""The data the HTML page embeds, read back the way a browser's HTML tokenizer splits the page
(Python's html.parser ends a <script> where a browser does): nothing in a case can end its
script element early, and the index and the cases read back as written."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import sample_reports

from gradekit.report import _html_data, write_html
from gradekit.report._html_data import script_safe


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._attrs: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._attrs, self._text = dict(attrs), []

    def handle_data(self, data: str) -> None:
        if self._attrs is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._attrs is not None:
            self.scripts.append((self._attrs, "".join(self._text)))
            self._attrs = None


def _read(page: Path) -> tuple[dict[str, Any], list[Any], int]:
    """The index, the cases (in order) and the number of executable scripts of a page (every
    data block, of a JSON type, must parse)."""
    parser = _Scripts()
    parser.feed(page.read_text(encoding="utf-8"))
    index: dict[str, Any] = {}
    cases: list[Any] = []
    code = 0
    for attrs, text in parser.scripts:
        if attrs.get("id") == "gk-index":
            index = json.loads(text)
        elif (attrs.get("id") or "").startswith("gk-cases-"):
            assert attrs.get("type") == "application/x-ndjson"
            cases.extend(json.loads(line) for line in text.split("\n"))
        elif attrs.get("type") == "application/json":  # pass@k, the searched texts
            json.loads(text)
        elif attrs.get("type") == "application/x-ndjson":  # the baseline's cases
            [json.loads(line) for line in text.split("\n") if line]
        else:
            code += 1
    return index, cases, code


@pytest.mark.parametrize(
    "text",
    ["</script>", "</SCRIPT >", "<!--<script>", "<!-- </script> -->", "a</b", "\u2028</", "<\\/"],
)
def test_script_safe_json_means_the_same_and_holds_no_end_tag(text: str) -> None:
    encoded = script_safe(json.dumps({"k": text}, ensure_ascii=False))
    assert "</" not in encoded and "<!--" not in encoded
    assert json.loads(encoded) == {"k": text}


def test_the_page_embeds_every_case_as_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_html_data, "CHUNK_CASES", 4)  # several chunks from six cases
    suite = sample_reports.agent_suite(tmp_path)
    report = sample_reports.run(suite)
    given = sample_reports.with_tags(report)
    given[1]["turns"][0]["output"] = "lone surrogate \ud800 and " + sample_reports.NASTY
    write_html(report, tmp_path / "r.html", cases=sample_reports.as_reports(given))
    index, cases, code = _read(tmp_path / "r.html")
    assert code == 1  # the viewer's own script, and no script from the data
    given[1]["turns"][0]["output"] = given[1]["turns"][0]["output"].replace("\ud800", "\ufffd")
    assert cases == given
    assert index["n"] == 6 and index["chunks"] == [0, 4]
    assert index["names"] == [case["name"] for case in given]
    assert index["outcome"] == "pfeeff"
    # An errored case has no score in the index (the list shows "no score").
    assert [score is None for score in index["score"]] == [False, False, True, True, False, False]
    assert index["turns"] == [1, 1, 1, 2, 2, 1]
    worst = {}
    start = 0
    for i, count in enumerate(index["gc"]):
        for code_ in index["gv"][start : start + count]:
            worst[(index["names"][i], index["graders"][code_ // 3])] = "pfe"[code_ % 3]
        start += count
    assert worst[("refund", "behavior")] == "f" and worst[("refund", "polite")] == "f"
    assert worst[("stops-early", "explode")] == "e"
    assert worst[("transcript-refund", "no-promises")] == "f"  # turn 0 passed, turn 1 failed
    tags = [
        [index["tags"][t] for t in index["tv"][sum(index["tc"][:i]) : sum(index["tc"][: i + 1])]]
        for i in range(6)
    ]
    assert tags == [["smoke"], ["smoke", "money"], [], [], ["support", "transcript"], []]


def test_reports_without_samples_embed_the_case_reports(tmp_path: Path) -> None:
    report = sample_reports.run(sample_reports.agent_suite(tmp_path))
    write_html(report, tmp_path / "r.html")
    index, cases, _ = _read(tmp_path / "r.html")
    assert cases == [case.to_dict() for case in report.cases]
    # The case reports carry their tags: the page's tag menu has them.
    assert index["tags"] == ["smoke", "money", "support", "transcript"]
    assert index["tc"] == [1, 2, 0, 0, 2, 0]


def test_the_viewers_own_script_and_style_cannot_end_their_elements() -> None:
    from gradekit.report.html import SCRIPT, STYLE

    assert "GK.renderCase" in SCRIPT  # all three parts are there
    assert "</script" not in SCRIPT.lower() and "<!--" not in SCRIPT
    assert "</style" not in STYLE.lower() and ".row.case" in STYLE
