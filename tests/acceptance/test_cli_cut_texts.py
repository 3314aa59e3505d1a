"""A long text in JUnit's `<system-out>` and the Markdown summary, built by `gradekit run` from
its JSON form (already cut at `--max-text`): the marker counts the characters missing from the
text graded, not from its cut form."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import junitparser
from cli_support import Run

Write = Callable[[str, str], Path]

LONG = "x" * 25_000
RESULT = "y" * 5_000


def _suite(write: Write) -> None:
    dataset = [
        {"name": "long", "output": LONG, "expected": "short", "graders": [{"kind": "equality"}]},
        {
            "name": "calls",
            "output": "done",
            "expected": "other",
            "tool_calls": [{"name": "f", "result": RESULT}, {"name": "g", "result": RESULT}],
            "graders": [{"kind": "equality"}],
        },
    ]
    write("cases.jsonl", "".join(json.dumps(line) + "\n" for line in dataset))
    write("s.yaml", "name: cut\ndataset: cases.jsonl\n")


def test_junit_and_markdown_count_what_is_missing_from_the_text_graded(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write)
    done = gradekit("run", "s.yaml", "-q", "-o", "r.json", "--junit", "r.xml", "--markdown", "r.md")
    assert done.returncode == 1, done.stderr
    long, _ = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert long["turns"][0]["output"] == "x" * 4096 + "…[cut 20,904 more characters]"

    (suite,) = list(junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml")))
    out = {case.name: case.system_out for case in suite}
    # <system-out> keeps 4,000 characters of each part: 21,000 of the 25,000 are missing.
    assert "\n  output: " + "x" * 4000 + "…[cut 21,000 more characters]\n" in out["long"]
    # The tool calls, one a line, each result already cut in the JSON: what is missing counts
    # the rest of the first result and the whole second line, as graded.
    lines = f"1. f -> {RESULT}\n2. g -> {RESULT}"
    # (4,000 characters hold no newline: the part is on its label's line.)
    assert (
        f"\n  tool calls: {lines[:4000]}…[cut {len(lines) - 4000:,} more characters]\n"
        in (out["calls"])
    )

    # The Markdown summary keeps 1,500 characters of each part.
    markdown = (tmp_path / "r.md").read_text()
    assert "x" * 1500 + "…[cut 23,500 more characters]\n" in markdown
    assert f"…[cut {len(lines) - 1500:,} more characters]\n" in markdown
    assert "more characters)" not in markdown and "more characters)" not in out["long"]


def test_a_text_cut_by_max_text_alone_keeps_its_marker(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    # Cut at 1,000 bytes by --max-text, the text fits the reports' bounds: shown as the JSON
    # report has it, its own count intact.
    _suite(write)
    done = gradekit("run", "s.yaml", "-q", "--max-text", "1000", "--junit", "r.xml")
    assert done.returncode == 1, done.stderr
    (suite,) = list(junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml")))
    out = {case.name: case.system_out for case in suite}
    assert "\n  output: " + "x" * 1000 + "…[cut 24,000 more characters]\n" in out["long"]
