"""Grader details in the reports of `gradekit run`, bounded as the sample is: every text in
them cut at `--max-text` (4096 bytes by default), at any depth, a composite's children
included; `--no-samples` also leaves out where gradekit's kinds copy the sample's texts; and
details with nothing to cut are written as they were."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli_support import Run

Write = Callable[[str, str], Path]

OUTPUT = "x" * 1_000_000 + "a"
EXPECTED = "x" * 1_000_000 + "b"
GRADERS = '''
from gradekit.code import GraderResult


async def nested(ctx):
    """Its details hold the output deep inside, and a long key (an async grader: the event
    loop's path, not the batch's)."""
    return GraderResult(0.0, details={"deep": [{"text": ctx.agent_response}], "k" * 5000: 1})


def short(ctx):
    return GraderResult(1.0, details={"a": "short", "n": [1, 2.5, None, True], "m": {"k": "v"}})
'''


def _suite(write: Write) -> None:
    case = {"output": OUTPUT, "expected": EXPECTED}
    dataset = [
        {"name": "equality", **case, "graders": [{"kind": "equality"}]},
        {
            "name": "composite",
            **case,
            "graders": [
                {
                    "kind": "all",
                    "graders": [{"kind": "equality"}, {"kind": "regex", "pattern": "x+"}],
                }
            ],
        },
        {"name": "nested", **case, "graders": [{"kind": "code", "grader": "dgraders:nested"}]},
        {
            "name": "short",
            "output": "hi",
            "graders": [{"kind": "code", "grader": "dgraders:short"}],
        },
    ]
    write("cases.jsonl", "".join(json.dumps(line) + "\n" for line in dataset))
    write("dgraders.py", GRADERS)
    write("s.yaml", "name: details\ndataset: cases.jsonl\n")


def _details(report: dict[str, Any]) -> dict[str, Any]:
    return {case["name"]: case["turns"][0]["results"][0]["details"] for case in report["cases"]}


def _cut(text: str, kept: int) -> str:
    return text[:kept] + f"…[cut {len(text) - kept:,} more characters]"


def _run(gradekit: Run, tmp_path: Path, *flags: str) -> dict[str, dict[str, Any]]:
    """Run with `flags`, writing every report (and a results log); each one's details, and
    the size of each file."""
    outputs = ("-o", "r.json", "--junit", "r.xml", "--markdown", "r.md", "--html", "r.html")
    done = gradekit("run", "s.yaml", "-q", *outputs, *flags)
    assert done.returncode == 1, done.stderr
    (tmp_path / "log.jsonl").unlink(missing_ok=True)  # a fresh log: nothing resumed
    logged = gradekit("run", "s.yaml", "-q", "--resume", "log.jsonl", "-o", "l.json", *flags)
    assert logged.returncode == 1, logged.stderr
    for name in ("r.json", "r.xml", "r.md", "r.html", "log.jsonl", "l.json"):
        assert (tmp_path / name).stat().st_size < 200_000, name
    streamed = _details(json.loads((tmp_path / "r.json").read_text()))
    untimed = json.loads((tmp_path / "l.json").read_text(), object_hook=_untimed)
    assert _details(untimed) == json.loads(json.dumps(streamed), object_hook=_untimed)
    return streamed


def _untimed(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key != "duration_ms"}


def test_details_are_cut_at_max_text(gradekit: Run, write: Write, tmp_path: Path) -> None:
    _suite(write)
    details = _run(gradekit, tmp_path)
    assert details["equality"] == {"output": _cut(OUTPUT, 4096), "expected": _cut(EXPECTED, 4096)}
    children = details["composite"]["results"]
    assert children[0]["details"] == details["equality"]
    assert children[1]["details"] == {"match": _cut("x" * 1_000_000, 4096)}
    assert details["nested"] == {"deep": [{"text": _cut(OUTPUT, 4096)}], _cut("k" * 5000, 4096): 1}
    assert details["short"] == {"a": "short", "n": [1, 2.5, None, True], "m": {"k": "v"}}
    assert "x" * 5000 not in (tmp_path / "r.xml").read_text()

    details = _run(gradekit, tmp_path, "--max-text", "100")
    assert details["equality"] == {"output": _cut(OUTPUT, 100), "expected": _cut(EXPECTED, 100)}
    assert details["nested"]["deep"] == [{"text": _cut(OUTPUT, 100)}]


def test_no_samples_leaves_the_copies_of_the_sample_out_of_details(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write)
    details = _run(gradekit, tmp_path, "--no-samples")
    assert details["equality"] == {}
    assert [child["details"] for child in details["composite"]["results"]] == [{}, {}]
    # What a kind of someone else's holds cannot be told from the sample: cut as by default.
    assert details["nested"]["deep"] == [{"text": _cut(OUTPUT, 4096)}]
    assert details["short"] == {"a": "short", "n": [1, 2.5, None, True], "m": {"k": "v"}}
    for name in ("r.json", "r.xml", "r.md", "r.html", "log.jsonl"):
        assert "x" * 5000 not in (tmp_path / name).read_text(), name
