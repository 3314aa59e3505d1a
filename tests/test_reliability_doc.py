"""docs/reliability.md names, for each promise, the tests that hold it: each must exist."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "reliability.md"
HELD_BY = re.compile(r"`(tests/[\w/.-]+\.py)(?:::(\w+))?")


def test_every_test_a_promise_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    named = HELD_BY.findall(text)
    assert len(named) > 100  # the doc still names its tests in this form
    missing = []
    for path, name in named:
        source = REPO / path
        if not source.is_file():
            missing.append(path)
        elif name and not re.search(rf"def {re.escape(name)}\b", source.read_text("utf-8")):
            missing.append(f"{path}::{name}")
    assert missing == []


def test_every_promise_says_what_holds_it() -> None:
    sections = re.split(r"^### ", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    unheld = [
        section.splitlines()[0]
        for section in sections
        if not any(mark in section for mark in ("Held by", "See [", "| held by |"))
    ]
    assert unheld == []
