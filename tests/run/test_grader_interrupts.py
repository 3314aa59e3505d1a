"""A grader that raises KeyboardInterrupt or SystemExit gets an error result, on every path a
grader can run on; a real Ctrl-C (SIGINT to the process) still stops the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_graders import AsyncRaises, InlineRaises, Raises
from runner_graders import Echo, Fixed, entry, one_turn_suite

import gradekit
from gradekit import Sample
from gradekit.run.runner import run_suite

HERE = Path(__file__).parent
EXPECTED = {"KeyboardInterrupt": "KeyboardInterrupt", "SystemExit": "SystemExit: 3"}


def graders_for(path: str, what: str):
    if path == "pool":
        return [entry(Raises(what=what)), entry(Echo())]
    if path == "async":
        return [entry(AsyncRaises(name="raises", what=what)), entry(Echo())]
    if path == "inline":  # every grader inline: the case is graded in a batch
        return [entry(InlineRaises(name="raises", what=what)), entry(Fixed(name="echo"))]
    return [entry(Raises(what=what), isolation="process"), entry(Echo())]


@pytest.mark.parametrize("what", ["KeyboardInterrupt", "SystemExit"])
@pytest.mark.parametrize("path", ["pool", "async", "inline", "process"])
def test_a_grader_raising_it_gets_an_error_result_and_the_run_goes_on(path, what):
    report = run_suite(one_turn_suite(graders_for(path, what), ["0", "0", "0"]))
    assert report.complete
    assert report.summary.cases == 3 and report.summary.errored == 3
    for case in report.cases:
        results = {record.result.name: record.result for record in case.turns[0].results}
        assert results["raises"].error == EXPECTED[what]
        assert results["echo"].passed


@pytest.mark.parametrize("what", ["KeyboardInterrupt", "SystemExit"])
def test_grade_gives_the_error_result_too(what):
    sample = Sample(output="0", expected="0")
    results = gradekit.grade(sample, [Raises(what=what), AsyncRaises(what=what)])
    assert [result.error for result in results] == [EXPECTED[what]] * 2


SCRIPT = """
import json, sys
from hostile_graders import Raises
from runner_graders import Sleep, entry, one_turn_suite
from gradekit.run.runner import run_suite

def on_case(case):
    print("case", case.name, flush=True)

graders = [entry(Raises()), entry(Sleep(seconds=0.1))]
report = run_suite(one_turn_suite(graders, ["0"] * 500), jobs=2, on_case=on_case)
# On a line of its own: the Ctrl-C may have cut the last "case" line short.
print("\\n" + json.dumps({"complete": report.complete, "cases": len(report.cases)}), flush=True)
"""


def test_a_real_ctrl_c_still_stops_a_run_whose_graders_raise_keyboard_interrupt():
    fixtures = HERE.parent / "fixtures" / "graders"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(fixtures), *sys.path])}
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    for _ in range(3):
        assert process.stdout.readline().startswith("case ")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    data = json.loads(out.strip().splitlines()[-1])
    assert data["complete"] is False
    assert 3 <= data["cases"] < 500
