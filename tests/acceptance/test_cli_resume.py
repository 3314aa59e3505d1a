"""`--resume`: a run killed with SIGKILL at any point, then resumed, grades every case exactly
once in the final report and loses none; a line cut short by the kill is graded again; the
log is written a chunk of cases at a time, not a case at a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import Run, gradekit_command

Write = Callable[[str, str], Path]

SLOW_GRADERS = """
    import os, time

    def slow(ctx):
        # Record every grading, so the test can tell which cases were graded in which run.
        with open("graded.log", "a") as log:
            log.write(ctx.test_case_name + "\\n")
        time.sleep(0.05)
        return True
"""

CASES = 60


def _slow_suite(write: Write, cases: int = CASES) -> None:
    write("graders.py", SLOW_GRADERS)
    lines = [
        json.dumps(
            {
                "name": f"case-{i:03d}",
                "output": str(i),
                "expected": i,
                "graders": [{"kind": "code", "grader": "graders:slow"}],
            }
        )
        for i in range(cases)
    ]
    write("data.jsonl", "\n".join(lines) + "\n")
    write("suite.yaml", "name: slow\ngraders: [{kind: numeric}]\ndataset: data.jsonl\n")


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _names(path: Path) -> list[str]:
    return [json.loads(line)["name"] for line in _lines(path)]


def _start_slow_run(folder: Path) -> subprocess.Popen[bytes]:
    """`gradekit run` of the slow suite in the background, logging to results.jsonl."""
    return subprocess.Popen(
        [
            gradekit_command(),
            "run",
            "suite.yaml",
            "--resume",
            "results.jsonl",
            "-o",
            "report.json",
            "--jobs",
            "2",
            "--quiet",
        ],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _wait_for_cases(process: subprocess.Popen[bytes], log: Path, count: int) -> None:
    """Wait until `count` finished cases are in the log, while the run is still going."""
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_bytes().count(b"\n") >= count):
        assert process.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < deadline, "no case finished in time"
        time.sleep(0.01)


def test_resume_after_sigkill_grades_every_case_exactly_once(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _slow_suite(write)
    log = tmp_path / "results.jsonl"
    process = _start_slow_run(tmp_path)
    try:
        _wait_for_cases(process, log, 10)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert not (tmp_path / "report.json").exists()
    complete = [line for line in log.read_text().split("\n")[:-1]]  # last piece may be cut
    finished_before = {json.loads(line)["name"] for line in complete}
    assert 10 <= len(finished_before) < CASES, "the kill must land mid-run"
    graded_before = len(_lines(tmp_path / "graded.log"))

    done = gradekit("run", "suite.yaml", "--resume", "results.jsonl", "-o", "report.json")
    assert done.returncode == 0, done.stderr

    expected = [f"case-{i:03d}" for i in range(CASES)]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [case["name"] for case in report["cases"]] == expected
    assert report["summary"]["cases"] == CASES
    assert report["summary"]["passed"] == CASES
    assert sorted(_names(log)) == expected  # the log holds every case once
    graded_after = _lines(tmp_path / "graded.log")[graded_before:]
    assert not finished_before & set(graded_after), "a finished case was graded again"
    assert set(graded_after) | finished_before == set(expected)


def test_truncated_last_line_is_graded_again(gradekit: Run, write: Write, tmp_path: Path) -> None:
    _slow_suite(write, cases=5)
    assert gradekit("run", "suite.yaml", "--resume", "results.jsonl").returncode == 0
    log = tmp_path / "results.jsonl"
    data = log.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = json.loads(data[last_start:])["name"]
    log.write_bytes(data[: last_start + 25])  # the kill landed mid-write
    (tmp_path / "graded.log").unlink()

    done = gradekit("run", "suite.yaml", "--resume", "results.jsonl", "-o", "report.json")
    assert done.returncode == 0, done.stderr
    assert _lines(tmp_path / "graded.log") == [cut]
    names = _names(log)  # every line whole again: the partial one was cut off, not appended to
    assert sorted(names) == [f"case-{i:03d}" for i in range(5)]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [case["name"] for case in report["cases"]] == [f"case-{i:03d}" for i in range(5)]


def test_resuming_a_finished_log_grades_nothing(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    first = gradekit("run", "suite.yaml", "--resume", "results.jsonl", "-o", "first.json")
    assert first.returncode == 1
    before = (tmp_path / "results.jsonl").read_bytes()
    again = gradekit("run", "suite.yaml", "--resume", "results.jsonl", "-o", "again.json")
    assert again.returncode == 1  # the failures in the log still fail the run
    assert (tmp_path / "results.jsonl").read_bytes() == before
    first_report = json.loads((tmp_path / "first.json").read_text())
    again_report = json.loads((tmp_path / "again.json").read_text())
    assert again_report["summary"] == first_report["summary"]
    assert again_report["cases"] == first_report["cases"]
    assert "cases that did not pass (2):\n  FAIL   bad\n" in again.stdout


def test_a_dataset_line_reusing_a_yaml_case_name_is_refused_before_anything_is_logged(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    # Under one name, one case would take the other's place in the log, a baseline, compare.
    write(
        "suite.yaml",
        "graders: [{kind: equality}]\ncases: [{name: y1, output: a, expected: a}]\n"
        "dataset: data.jsonl\n",
    )
    write("data.jsonl", '{"name": "y1", "output": "b", "expected": "b"}\n')
    first = gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-o", "first.json")
    assert first.returncode == 2
    assert "data.jsonl:1:1: duplicate case name 'y1' (also at suite.yaml:2:" in first.stderr
    assert not (tmp_path / "first.json").exists()
    assert not (tmp_path / "log.jsonl").exists()


def test_a_corrupt_line_in_the_log_is_an_error(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    (tmp_path / "results.jsonl").write_text('{"name": "good"}\nnot json\n')
    done = gradekit("run", "suite.yaml", "--resume", "results.jsonl")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "results.jsonl:1: not a finished case (KeyError: 'passed'); this file is not a gradekit "
        "results log, or was edited: delete the line (its case is graded again) or give "
        "another --resume file"
    )


def test_resume_counts_in_the_filter(gradekit: Run, mixed_suite: Path, tmp_path: Path) -> None:
    done = gradekit("run", "suite.yaml", "--resume", "r.jsonl", "--filter", "good")
    assert done.returncode == 0, done.stderr
    assert Counter(_names(tmp_path / "r.jsonl")) == {"good": 1}
    done = gradekit("run", "suite.yaml", "--resume", "r.jsonl", "-o", "all.json")
    assert done.returncode == 1
    assert Counter(_names(tmp_path / "r.jsonl")) == {
        "good": 1,
        "bad": 1,
        "broken": 1,
        "two-turns": 1,
    }


def test_ctrl_c_exits_130_with_partial_reports(write: Write, tmp_path: Path) -> None:
    _slow_suite(write)
    log = tmp_path / "results.jsonl"
    process = _start_slow_run(tmp_path)
    _wait_for_cases(process, log, 5)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130  # 128 + SIGINT, as shells report it
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["complete"], report["passed"]) == (False, False)
    finished = _names(log)
    assert [case["name"] for case in report["cases"]] == sorted(finished)
    assert 5 <= report["summary"]["cases"] == len(finished) < CASES


WRITES_COUNTED = """
import atexit, sys
from gradekit.cli import main

def writes() -> None:  # write system calls of this process, all files together
    with open("/proc/self/io") as io:
        counts = dict(line.split(": ") for line in io.read().splitlines())
    sys.stderr.write(f"syscw {counts['syscw']}\\n")

atexit.register(writes)
sys.exit(main(sys.argv[1:]))
"""


def test_the_log_is_written_a_chunk_of_cases_at_a_time(write: Write, tmp_path: Path) -> None:
    if not Path("/proc/self/io").exists():
        pytest.skip("no /proc/self/io to count write system calls")
    cases = 3000
    rows = (
        json.dumps({"name": f"c{i:04d}", "output": str(i), "expected": i}) for i in range(cases)
    )
    write("data.jsonl", "\n".join(rows) + "\n")
    write("suite.yaml", "name: big\ngraders: [{kind: numeric}]\ndataset: data.jsonl\n")
    argv = ["run", "suite.yaml", "--resume", "results.jsonl", "-o", "report.json", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-c", WRITES_COUNTED, *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(_names(tmp_path / "results.jsonl")) == [f"c{i:04d}" for i in range(cases)]
    writes = int(done.stderr.rsplit("syscw ", 1)[1])
    # One write a case was 3000 writes and more; a chunk of cases a write is a few dozen (the
    # report's writes and the interpreter's own included).
    assert writes < cases / 10, writes
