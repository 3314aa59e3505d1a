"""What `gradekit run` shows: a progress bar on a terminal, one line otherwise, nothing quiet."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

from cli_support import Run, gradekit_command


def _run_on_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run gradekit with stderr on a pseudo-terminal; return its exit code and what it drew."""
    leader, follower = pty.openpty()
    env = dict(os.environ, COLUMNS="120", TERM="xterm")
    process = subprocess.Popen(
        [gradekit_command(), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    drawn = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            drawn += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=30), drawn.decode(errors="replace")


def test_progress_bar_on_a_terminal(mixed_suite: Path, tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(["run", "suite.yaml"], tmp_path)
    assert code == 1
    assert "grading" in drawn
    assert "4/4" in drawn  # done of total: the suite's size is known
    assert "/s" in drawn  # the rate
    assert "0:00:0" in drawn  # elapsed
    assert "gradekit: mixed: 4 cases" not in drawn  # the one-line summary is for non-terminals


def test_one_line_summary_when_not_a_terminal(gradekit: Run, mixed_suite: Path) -> None:
    done = gradekit("run", "suite.yaml")
    assert done.stderr.startswith(
        "gradekit: mixed: 4 cases: 2 passed, 1 failed, 1 errored "
        "(50.0% pass rate; 66.7% of the graded cases) in "
    )
    assert done.stderr.count("\n") == 1


def test_quiet_prints_nothing(mixed_suite: Path, tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(["run", "suite.yaml", "--quiet"], tmp_path)
    assert (code, drawn) == (1, "")


def test_plain_text_without_rich(mixed_suite: Path, tmp_path: Path) -> None:
    """rich is optional: without it, the same summary as aligned plain text."""
    import sys

    program = (
        "import sys; sys.modules['rich'] = None\n"
        "from gradekit.cli import main\n"
        "raise SystemExit(main(['run', 'suite.yaml']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "gradekit: mixed failed",
        "cases  passed  failed  errored  pass rate  graded pass rate  duration",
        "-----  ------  ------  -------  ---------  ----------------  --------",
    ]
    assert re.fullmatch(
        r"    4       2       1        1      50\.0%             66\.7% +\d+ ms", lines[3]
    ), lines[3]
    assert "numeric        1       1        0      50.0%       0.500" in lines
    assert "explode        0       0        1       0.0%           -" in lines
