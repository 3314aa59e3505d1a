"""Ctrl-C: a real SIGINT to a process running a suite stops it cleanly with a partial report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gradekit.report.attempts import wilson_interval

HERE = Path(__file__).parent

SCRIPT = """
import json, sys
from runner_graders import Sleep, entry, one_turn_suite
from gradekit.run.runner import run_suite

seen = []
def on_case(case):
    seen.append(case.name)
    print("case", case.name, flush=True)

report = run_suite(one_turn_suite([entry(Sleep(seconds=0.1))], ["0"] * 500), jobs=2,
                   on_case=on_case)
print(json.dumps({"complete": report.complete, "cases": [c.name for c in report.cases],
                  "seen": seen, "summary": report.summary.to_dict()}), flush=True)
"""


COUNTING = """
import json
from gradekit import Outputs, Sample
from gradekit.suite.model import Case, Suite, Turn
from gradekit.run.runner import run_suite
from runner_graders import Fixed, entry

graders = (entry(Fixed()), entry(Fixed(name="half", outcome="fail", score=0.5)))

def cases():
    for index in range(10_000_000):
        if index == 20_000:
            print("running", flush=True)
        yield Case(f"c{index}", (Turn(Sample(output="0"), graders),))

report = run_suite(Suite("s", cases), outputs=Outputs(keep_cases=False))
print(json.dumps({"complete": report.complete, "summary": report.summary.to_dict()}), flush=True)
"""


def start(script: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    return subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def interrupt(process: subprocess.Popen[str]) -> dict:
    """Send Ctrl-C; the process must end cleanly, without a traceback. Its last line, parsed."""
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    data = json.loads(out.strip().splitlines()[-1])
    assert data["complete"] is False
    return data


def test_sigint_stops_the_run_with_an_incomplete_report_and_no_traceback():
    process = start(SCRIPT)
    assert process.stdout is not None
    for _ in range(4):
        assert process.stdout.readline().startswith("case ")
    data = interrupt(process)
    assert 4 <= len(data["cases"]) < 500
    # Every case in the report went through on_case, and the report keeps the suite's order.
    assert sorted(data["cases"]) == sorted(data["seen"])
    assert data["cases"] == sorted(data["cases"], key=lambda name: int(name[1:]))
    assert data["summary"]["cases"] == len(data["cases"])


def test_sigint_in_a_run_that_only_counts_keeps_an_exact_summary_of_what_finished():
    process = start(COUNTING)
    assert process.stdout is not None
    assert process.stdout.readline() == "running\n"
    summary = interrupt(process)["summary"]
    cases = summary["cases"]
    assert 0 < cases < 10_000_000
    assert summary["failed"] == cases and summary["passed"] == summary["errored"] == 0
    # Every counted case was counted whole: each of its two graders once.
    assert summary["graders"]["fixed"] == {
        "passed": cases,
        "failed": 0,
        "errored": 0,
        "mean_score": 1.0,
        "mean_score_interval": pytest.approx(list(wilson_interval(cases, cases) or ()), abs=1e-12),
    }
    assert summary["graders"]["half"] == {
        "passed": 0,
        "failed": cases,
        "errored": 0,
        "mean_score": 0.5,
        "mean_score_interval": pytest.approx(
            list(wilson_interval(cases / 2, cases) or ()), abs=1e-12
        ),
    }
