"""Exits that tell the truth: a grader cannot end or hold `gradekit run`, move its reports, or
turn a run whose every case passed into a crash.

Each test runs the real `gradekit` command on a suite whose code grader does what a careless
grader does: calls `os._exit`, leaves a non-daemon thread running, changes the working folder,
closes the process's stdout.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import Run

Write = Callable[[str, str], Path]

GRADERS = """
    import asyncio
    import os
    import sys
    import threading
    import time

    def leaves(ctx):
        os._exit(0)

    async def leaves_async(ctx):
        os._exit(0)

    def leaves_from_its_thread(ctx):
        thread = threading.Thread(target=os._exit, args=(0,))
        thread.start()
        thread.join()
        return True

    def lingers(ctx):
        threading.Thread(target=time.sleep, args=(600,), name="lingering", daemon=False).start()
        return True

    def moves(ctx):
        os.makedirs("elsewhere", exist_ok=True)
        os.chdir("elsewhere")
        return True

    def closes_stdout(ctx):
        os.close(1)
        return True

    def closes_stderr(ctx):
        os.close(2)
        return True

    def closes_sys_stdout(ctx):
        sys.stdout.close()
        return True

    def closes_sys_stderr(ctx):
        sys.stderr.close()
        return True
"""


def _suite(write: Write, grader: str) -> None:
    write("graders.py", GRADERS)
    write(
        "suite.yaml",
        f"""
        name: exits
        cases:
          - {{name: plain, output: "4", expected: 4, graders: [{{kind: numeric}}]}}
          - {{name: odd, output: "x", graders: [{{kind: code, grader: "graders:{grader}"}}]}}
          - {{name: after, output: "5", expected: 5, graders: [{{kind: numeric}}]}}
        """,
    )


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {
        case["name"]: "error" if case["errored"] else "pass" if case["passed"] else "fail"
        for case in report["cases"]
    }


@pytest.mark.parametrize("grader", ["leaves", "leaves_async"])
def test_os_exit_in_a_grader_is_its_error_not_the_end_of_the_run(
    gradekit: Run, write: Write, tmp_path: Path, grader: str
) -> None:
    _suite(write, grader)
    done = gradekit("run", "suite.yaml", "-o", "report.json", "--jobs", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert _outcomes(report) == {"plain": "pass", "odd": "error", "after": "pass"}
    error = report["cases"][1]["turns"][0]["results"][0]["error"]
    assert error.startswith(
        "ExitRefusedError: os._exit(0) was called while gradekit was grading: a grader "
        "cannot end gradekit's process; return its result or raise an error instead"
    )
    assert "1 errored" in done.stderr
    assert "os._exit(0) called in thread" in done.stderr


def test_os_exit_in_a_thread_a_grader_started_ends_that_thread_not_the_run(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write, "leaves_from_its_thread")
    done = gradekit("run", "suite.yaml", "-o", "report.json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert _outcomes(report) == {"plain": "pass", "odd": "pass", "after": "pass"}
    assert (
        "gradekit: os._exit(0) called in thread 'Thread-1 (_refusing)' during the run was "
        "refused (a grader cannot end the run)" in done.stderr
    )


def test_a_thread_left_running_by_a_grader_does_not_hold_the_exit(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write, "lingers")
    started = time.monotonic()
    done = gradekit("run", "suite.yaml", "-o", "report.json", "--junit", "r.xml", timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "report.json").read_text())["passed"] is True
    assert (tmp_path / "r.xml").read_text().rstrip().endswith("</testsuites>")
    assert "3 passed" in done.stdout + done.stderr  # the summary was flushed before the exit
    assert "gradekit: 1 thread a grader started is still running (lingering)" in done.stderr


@pytest.mark.parametrize("resume", [True, False], ids=["resume", "streamed"])
def test_a_graders_chdir_does_not_move_relative_report_paths(
    gradekit: Run, write: Write, tmp_path: Path, resume: bool
) -> None:
    _suite(write, "moves")
    (tmp_path / "out").mkdir()
    args = ["-o", "out/r.json", "--junit", "out/r.xml", "--markdown", "out/r.md"]
    args += ["--html", "out/r.html"] + (["--resume", "out/log"] if resume else [])
    done = gradekit("run", "suite.yaml", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ["r.json", "r.xml", "r.md", "r.html"] + (["log"] if resume else []):
        assert (tmp_path / "out" / name).stat().st_size > 0, name
    assert json.loads((tmp_path / "out" / "r.json").read_text())["summary"]["passed"] == 3
    assert not (tmp_path / "elsewhere" / "out").exists()


@pytest.mark.parametrize(
    "grader", ["closes_stdout", "closes_stderr", "closes_sys_stdout", "closes_sys_stderr"]
)
def test_a_grader_closing_stdout_or_stderr_leaves_the_verdict_and_the_reports(
    gradekit: Run, write: Write, tmp_path: Path, grader: str
) -> None:
    _suite(write, grader)
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--junit", "r.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["passed"] == 3
    assert (tmp_path / "r.xml").read_text().rstrip().endswith("</testsuites>")
    if grader.startswith("closes_sys_"):  # the descriptor is open: the output still shows
        assert "3 passed" in done.stderr and "gradekit: exits passed" in done.stdout
