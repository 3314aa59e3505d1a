"""The Markdown summary of a run whose cases are streamed (into the JSON report, or the
`--resume` log) lists the same failing cases as a run that keeps them all: it reads back
only the cases that did not pass."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from cli_support import gradekit_command

from gradekit.report.markdown import MAX_LISTED

CASES = 180


def _listed(markdown: str) -> list[str]:
    return re.findall(r"<summary>❌ <b>(case-\d+)</b>: failed</summary>", markdown)


def test_a_streamed_run_lists_the_same_failing_cases(tmp_path: Path) -> None:
    with open(tmp_path / "data.jsonl", "w", encoding="utf-8") as out:
        for index in range(CASES):
            wrong = index % 3 == 0
            line = {"name": f"case-{index:04d}", "output": "no" if wrong else "yes"}
            out.write(json.dumps({**line, "expected": "yes"}) + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: streamed\ngraders:\n  - kind: equality\ndataset: data.jsonl\n", encoding="utf-8"
    )
    command = [gradekit_command(), "run", "suite.yaml", "-q"]
    for extra in (
        ["-o", "r.json", "--markdown", "a.md"],
        ["--resume", "log.jsonl", "--markdown", "b.md"],
    ):
        done = subprocess.run([*command, *extra], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 1, done.stderr
    failing = [f"case-{index:04d}" for index in range(0, CASES, 3)]
    for name in ("a.md", "b.md"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert _listed(text) == failing[:MAX_LISTED]
        assert f"… and {len(failing) - MAX_LISTED} more not listed" in text
