"""Graders and commands never read gradekit's stdin, even a pipe that stays open."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import gradekit_command

GRADERS = """
    import sys

    def asks(ctx):
        return input("continue? ") == "yes"

    def reads_stdin(ctx):
        return sys.stdin.read() == ""
"""

SUITE = """
    name: stdin
    cases:
      - name: asks
        output: x
        graders: [{kind: code, grader: "graders:asks", timeout: 1}]
      - name: command
        workspace: .
        graders:
          - kind: build
            command: ["sh", "-c", "read line; echo \\"got:$line\\""]
      - name: child
        output: x
        graders: [{kind: code, grader: "graders:reads_stdin", isolation: process, timeout: 10}]
"""


@pytest.mark.parametrize("typed", ["yes\n", ""], ids=["typed-ahead", "silent"])
def test_an_open_stdin_pipe_is_never_read(
    write: Callable[[str, str], Path], tmp_path: Path, typed: str
) -> None:
    write("graders.py", GRADERS)
    write("suite.yaml", SUITE)
    with (tmp_path / "out.txt").open("w") as out, (tmp_path / "err.txt").open("w") as err:
        process = subprocess.Popen(
            [gradekit_command(), "run", "-q", "suite.yaml", "-o", "report.json"],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
            text=True,
        )
        assert process.stdin is not None
        # What was typed ahead is the user's; the pipe stays open while gradekit runs (before
        # the fix: `input()` read "yes", or hung until its timeout and the process aborted).
        process.stdin.write(typed)
        process.stdin.flush()
        try:
            process.wait(timeout=60)
        finally:
            process.kill()
            process.stdin.close()
    err = (tmp_path / "err.txt").read_text()
    assert process.returncode == 1, err  # not 134 (aborted at exit)
    assert "Fatal Python error" not in err
    cases = {
        case["name"]: case for case in json.loads((tmp_path / "report.json").read_text())["cases"]
    }
    asks = cases["asks"]["turns"][0]["results"][0]
    assert asks["error"] == "EOFError: EOF when reading a line"
    build = cases["command"]["turns"][0]["results"][0]
    assert build["details"]["stdout"] == "got:\n"
    child = cases["child"]["turns"][0]["results"][0]
    assert child["passed"] is True, child
