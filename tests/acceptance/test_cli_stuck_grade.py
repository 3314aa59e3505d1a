"""A grade stuck in C code holding the GIL past its timeout is reported and abandoned, and the
run goes on (issue 30): Python's `re` backtracking on `(a|a)*` against 40 `a`s and a `b` runs
for hours without letting any Python code of its process run, the runner's watch included, so
before, the run waited for it. The command's supervising process sees the run silent, finds
the grade past its timeout, kills the run, records that case timed out and runs the cases
left: the reports hold every case once. Real runs, a real C loop; quick with a short timeout
(`STUCK_GRACE`, 2 s, past it)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from processes import killed_at_the_end, start

Write = Callable[[str, str], Path]

STUCK = """
import re

def stuck(ctx):
    # Python's re backtracks in C holding the GIL: no thread of this process can run.
    return re.fullmatch("(a|a)*", "a" * 40 + "b") is not None
"""

# Without the supervisor the run never ends (hours); with it: the timeout (0.5 s), the grace
# (2 s), a look, the run forked again, and a shared machine's slack.
BOUND = 25

TIMED_OUT = "TimeoutError: grader 'stuck' exceeded 0.5s"


def _suite(write: Write) -> None:
    write("graders.py", STUCK)
    numeric = "graders: [{kind: numeric}]"
    stuck = "graders: [{kind: code, grader: 'graders:stuck', timeout: 0.5}]"
    write(
        "suite.yaml",
        "name: stuck\nsandbox: none\ncases:\n"
        f"  - {{name: before-0, output: '0', expected: 0, {numeric}}}\n"
        f"  - {{name: before-1, output: '1', expected: 1, {numeric}}}\n"
        f"  - {{name: stuck, output: x, {stuck}}}\n"
        f"  - {{name: after, output: '2', expected: 2, {numeric}}}\n",
    )


NAMES = ["before-0", "before-1", "stuck", "after"]


@pytest.mark.parametrize(
    "args",
    [("-o", "r.json", "--junit", "r.xml"), ("-o", "r.json", "--resume", "r.jsonl")],
    ids=["reports", "resume"],
)
def test_a_grade_stuck_in_c_past_its_timeout_is_abandoned_and_the_run_goes_on(
    write: Write, tmp_path: Path, args: tuple[str, ...]
) -> None:
    _suite(write)
    started = time.monotonic()
    process = start(tmp_path, "suite.yaml", "--jobs", "1", *args, tmp=tmp_path / "tmp")
    with killed_at_the_end(tmp_path / "no-pids", process):
        _, err = process.communicate(timeout=BOUND + 60)
        assert time.monotonic() - started < BOUND, err
    assert process.returncode == 1, err  # as for a run with an errored case
    assert "Traceback" not in err, err
    said = re.escape(
        "gradekit: case 'stuck': grader 'stuck' has run N s, past its timeout of 0.5 s, "
        "holding the interpreter's lock (GIL) in C code: the run's process was ended, the "
        "case is reported timed out, and the run goes on with the cases left (give such a "
        "grader `isolation: process`)\n"
    ).replace("N", r"\d+")
    assert len(re.findall(said, err)) == 1, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is True
    assert [case["name"] for case in report["cases"]] == NAMES  # each once, in suite order
    outcomes = {case["name"]: (case["passed"], case["errored"]) for case in report["cases"]}
    assert outcomes == {
        "before-0": (True, False),
        "before-1": (True, False),
        "stuck": (False, True),
        "after": (True, False),
    }
    (turn,) = report["cases"][2]["turns"]
    (result,) = turn["results"]
    assert (result["name"], result["error"], result["duration_ms"]) == ("stuck", TIMED_OUT, 500)
    summary = report["summary"]
    assert (summary["cases"], summary["passed"], summary["errored"]) == (4, 3, 1)
    if "--junit" in args:
        junit = (tmp_path / "r.xml").read_text()
        assert junit.count("<testcase ") == 4
        assert TIMED_OUT.replace("'", "&apos;") in junit or TIMED_OUT in junit
    if "--resume" in args:
        lines = (tmp_path / "r.jsonl").read_text().splitlines()
        assert sorted(json.loads(line)["name"] for line in lines) == sorted(NAMES)
        # Resumed, the log's cases are taken as they are: nothing is graded (nor stuck) again.
        again = start(tmp_path, "suite.yaml", "-o", "again.json", "--resume", "r.jsonl")
        with killed_at_the_end(tmp_path / "no-pids", again):
            _, err = again.communicate(timeout=60)
        assert again.returncode == 1, err
        assert "has run" not in err
        resumed = json.loads((tmp_path / "again.json").read_text())
        assert [case["name"] for case in resumed["cases"]] == NAMES
    assert os.listdir(tmp_path / "tmp") == []  # no scratch file left behind
    assert [name for name in os.listdir(tmp_path) if "gradekit-tmp" in name] == []
