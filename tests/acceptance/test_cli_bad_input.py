"""Bad input through the real command: a clean message and exit 2 (or, for a bad dataset line,
an errored case and reports for the rest), never a traceback, a hang or a lost run."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import Run

BOMB = "\n".join(
    [
        "graders: [{kind: equality}]",
        "cases:",
        "  - name: boom",
        "    layers:",
        '      l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(f"      l{n}: &l{n} [{','.join([f'*l{n - 1}'] * 10)}]" for n in range(1, 9)),
        "    output: *l8",
        "",
    ]
)


def test_an_alias_bomb_is_refused_at_once(gradekit: Run, write: Callable[[str, str], Path]):
    write("suite.yaml", BOMB)
    started = time.monotonic()
    done = gradekit("validate", "suite.yaml", timeout=30)
    assert time.monotonic() - started < 10  # the interpreter's start-up included
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[1].startswith("suite.yaml:10:11: invalid YAML: aliases expand")


def test_a_deep_dataset_line_is_one_errored_case_and_the_run_reports(
    gradekit: Run, write: Callable[[str, str], Path], tmp_path: Path
):
    write("suite.yaml", "graders: [{kind: equality}]\ndataset: data.jsonl\n")
    good = [json.dumps({"name": f"c{i}", "output": "a", "expected": "a"}) for i in range(2)]
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "data.jsonl").write_text(f"{good[0]}\n{deep}\n{good[1]}\n")
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--html", "r.html")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(c["name"], c["passed"], c.get("error")) for c in report["cases"]] == [
        ("c0", True, None),
        (
            "data.jsonl:2",
            False,
            "data.jsonl:2: values are nested more than 100 levels deep; flatten this value",
        ),
        ("c1", True, None),
    ]
    assert (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "a suite file is a mapping"),
        (bytes(range(256)), "is not UTF-8 text"),
        (b"cases: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested more than 100 levels deep"),
        (b"name: " + b"x" * 3_000_000 + b"\n", "the suite has no cases"),
    ],
    ids=["empty", "binary", "deep", "huge-line"],
)
def test_malformed_files_exit_2_without_a_traceback(
    gradekit: Run, tmp_path: Path, content: bytes, fragment: str
):
    (tmp_path / "suite.yaml").write_bytes(content)
    done = gradekit("validate", "suite.yaml")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert fragment in done.stderr
    assert len(done.stderr) < 2_000


@pytest.mark.parametrize("tolerance", ["nan", "-0.1", "1.5", "x"])
def test_compare_refuses_a_tolerance_that_is_not_a_score_difference(
    gradekit: Run, write: Callable[[str, str], Path], tolerance: str
) -> None:
    # NaN hid every score change, so `--fail-on score-drop` passed a run whose score fell 1 -> 0.
    write(
        "base.yaml", "graders: [{kind: equality}]\ncases: [{name: a, output: '1', expected: '1'}]\n"
    )
    write(
        "new.yaml", "graders: [{kind: equality}]\ncases: [{name: a, output: '2', expected: '1'}]\n"
    )
    assert gradekit("run", "base.yaml", "-o", "base.json").returncode == 0
    assert gradekit("run", "new.yaml", "-o", "new.json").returncode == 1

    done = gradekit(
        "compare", "base.json", "new.json", "--tolerance", tolerance, "--fail-on", "score-drop:0.5"
    )

    assert done.returncode == 2, done.stdout
    assert "argument --tolerance:" in done.stderr  # `x`: not a number; else not 0 to 1
    assert "0 and 1" in done.stderr or "from 0 to 1" in done.stderr
    assert "Traceback" not in done.stderr
