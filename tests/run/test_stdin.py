"""During a run, graders read /dev/null from `sys.stdin`; the caller's stdin comes back after.

(The command line, with a pipe kept open: tests/acceptance/test_cli_stdin.py.)"""

from __future__ import annotations

import os
import sys

from runner_graders import entry, one_turn_suite

import gradekit
from gradekit.run.runner import run_suite


def test_during_a_run_stdin_reads_nothing_and_is_given_back_after():
    seen = []

    class Reads:
        kind = "reads"
        name = "reads"

        def grade(self, sample):
            seen.append((sys.stdin.name, sys.stdin.read()))
            return gradekit.GradeResult(self.kind, self.name, True, 1.0)

    before = sys.stdin
    report = run_suite(one_turn_suite([entry(Reads())], ["0", "0"]))
    assert report.summary.passed == 2
    assert seen == [(os.devnull, "")] * 2
    assert sys.stdin is before
