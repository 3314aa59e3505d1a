"""A lone surrogate in the data (an emoji cut in half: the JSON escape `\\ud800` alone) has no
UTF-8 form. It reaches a run through a dataset line or a grader's message, and every report,
the `--resume` log and the console still get written, with U+FFFD in its place."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import Run

Write = Callable[[str, str], Path]

# Each line is valid JSON; `\ud800` and `\udc00` are lone surrogates once read.
DATASET = (
    '{"name": "lone", "output": "a\\ud800b", "expected": "x"}\n'
    '{"name": "n\\udc00ame", "output": "1", "expected": "1"}\n'
    '{"name": "ok", "output": "1", "expected": "1"}\n'
)

GRADERS = """
from gradekit.code import GraderResult

def cut(ctx):
    return GraderResult(0.0, reason="cut emoji \\ud83d")
"""

SUITE = """
name: surrogates
graders: [{kind: equality}]
dataset: data.jsonl
cases:
  - {name: message, output: "x", graders: [{kind: code, grader: "graders:cut"}]}
"""

REPORTS = ("-o", "r.json", "--junit", "r.xml", "--markdown", "r.md", "--html", "r.html")


def _strings(value: object) -> list[str]:
    """Every text in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key, *_strings(item)]]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


@pytest.mark.parametrize("writer", ["orjson", "stdlib"])
def test_lone_surrogates_are_written_as_the_replacement_character(
    gradekit: Run, write: Write, tmp_path: Path, writer: str
) -> None:
    write("graders.py", GRADERS)
    write("suite.yaml", SUITE)
    (tmp_path / "data.jsonl").write_text(DATASET, encoding="utf-8")
    env = {"GRADEKIT_JSON": writer} if writer == "stdlib" else {}

    done = gradekit("run", "suite.yaml", *REPORTS, "--resume", "log.jsonl", env=env)

    assert done.returncode == 1, done.stderr  # cases failed; nothing crashed
    assert "Traceback" not in done.stderr
    report = json.loads((tmp_path / "r.json").read_bytes().decode("utf-8"))  # strict UTF-8
    cases = {case["name"]: case for case in report["cases"]}
    assert set(cases) == {"lone", "n\ufffdame", "ok", "message"}
    assert cases["lone"]["turns"][0]["output"] == "a\ufffdb"
    results = cases["message"]["turns"][0]["results"]
    assert [r["message"] for r in results if r["kind"] == "code"] == ["cut emoji \ufffd"]
    assert not any("\ud800" <= c <= "\udfff" for text in _strings(report) for c in text)
    for name in ("r.xml", "r.md", "r.html", "log.jsonl"):
        assert (tmp_path / name).read_bytes().decode("utf-8")  # written, and strict UTF-8
    assert "cut emoji" in done.stdout  # the console lists the failed cases too

    again = gradekit("run", "suite.yaml", "-o", "again.json", "--resume", "log.jsonl", env=env)

    assert again.returncode == 1, again.stderr
    resumed = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert resumed["cases"] == report["cases"]
