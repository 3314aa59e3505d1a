"""Ctrl-C: a real SIGINT to a process running a suite stops it cleanly with a partial report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

SCRIPT = """
import json, sys
from runner_graders import Sleep, entry, one_turn_suite
from gradekit._runner import run_suite

seen = []
def on_case(case):
    seen.append(case.name)
    print("case", case.name, flush=True)

report = run_suite(one_turn_suite([entry(Sleep(seconds=0.1))], ["0"] * 500), jobs=2,
                   on_case=on_case)
print(json.dumps({"complete": report.complete, "cases": [c.name for c in report.cases],
                  "seen": seen, "summary": report.summary.to_dict()}), flush=True)
"""


def test_sigint_stops_the_run_with_an_incomplete_report_and_no_traceback():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    for _ in range(4):
        assert process.stdout.readline().startswith("case ")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    data = json.loads(out.strip().splitlines()[-1])
    assert data["complete"] is False
    assert 4 <= len(data["cases"]) < 500
    # Every case in the report went through on_case, and the report keeps the suite's order.
    assert sorted(data["cases"]) == sorted(data["seen"])
    assert data["cases"] == sorted(data["cases"], key=lambda name: int(name[1:]))
    assert data["summary"]["cases"] == len(data["cases"])
