"""Hung graders, for real, each run in a child interpreter of its own.

A grader spinning in `while True` cannot be killed in its thread: it keeps spinning (and taking
the GIL) until the process exits. So these runs happen in a subprocess, which also proves the
point that matters: the run finishes and the interpreter exits promptly anyway.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

HUNG_SUITE = """
import json, time
from runner_graders import AsyncSleep, Echo, Fixed, Sleep, Spin, entry, one_turn_suite
from gradekit.run.runner import run_suite

hung_async = AsyncSleep()
graders = [entry(Echo()), entry(Spin(), timeout=1), entry(Sleep(), timeout=1),
           entry(hung_async, timeout=1), entry(Fixed())]
started = time.monotonic()
report = run_suite(one_turn_suite(graders, ["0", "1"]), jobs=4)
print(json.dumps({"seconds": time.monotonic() - started, "cancelled": hung_async.cancelled.is_set(),
                  "report": report.to_dict()}))
"""

HUNG_INLINE = """
import json
from gradekit import Outputs, Sample
from gradekit.suite.model import Case, Suite, Turn
from gradekit.run.runner import run_suite
from runner_graders import Fixed, InlineSpin, entry

cases = [Case(f"c{i}", (Turn(Sample(output="0", expected="0"), (entry(Fixed()),)),))
         for i in range(50)]
hung = Turn(Sample(output="0", expected="0"), (entry(Fixed()), entry(InlineSpin(), timeout=1)))
cases.insert(10, Case("hung", (hung,)))
report = run_suite(Suite("s", lambda: iter(cases)), outputs=Outputs(keep_cases=KEEP))
print(json.dumps(report.to_dict()))
"""


def run_script(code: str) -> tuple[dict, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout), elapsed


def test_hung_graders_time_out_the_run_goes_on_and_the_process_exits_promptly():
    data, elapsed = run_script(HUNG_SUITE)
    assert data["seconds"] < 5
    # The interpreter exited although two worker threads were still stuck in their graders.
    assert elapsed < data["seconds"] + 10
    assert data["cancelled"] is True  # the async grader was cancelled
    report = data["report"]
    for case, echo_passed in zip(report["cases"], (True, False), strict=True):
        results = {r["name"]: r for r in case["turns"][0]["results"]}
        assert results["spin"]["error"] == "TimeoutError: grader 'spin' exceeded 1s"
        assert results["sleep"]["error"] == "TimeoutError: grader 'sleep' exceeded 1s"
        assert results["async_sleep"]["error"] == "TimeoutError: grader 'async_sleep' exceeded 1s"
        assert results["echo"]["passed"] is echo_passed and results["echo"]["error"] is None
        assert results["fixed"]["passed"] is True
    assert report["summary"]["errored"] == 2 and report["summary"]["failed"] == 0


STUBBORN = """
import json, time
import gradekit
from gradekit import Outputs, Sample
from runner_graders import Fixed, Stubborn, entry, one_turn_suite
from gradekit.run.runner import run_suite

graders = [entry(Fixed()), entry(Stubborn(name="forever"), timeout=1),
           entry(Stubborn(name="cleanup", mode="cleanup"), timeout=1),
           entry(Stubborn(name="passes", mode="passes"), timeout=1)]
started = time.monotonic()
report = run_suite(one_turn_suite(graders, ["0", "1"]), jobs=4)
seconds = time.monotonic() - started
started = time.monotonic()
alone = gradekit.grade(Sample(output="0"), [Stubborn()], timeout=1)
print(json.dumps({"seconds": seconds, "report": report.to_dict(),
                  "alone": [alone[0].error, time.monotonic() - started]}))
"""


def test_async_graders_that_survive_cancellation_still_time_out_and_end_the_run():
    # Each of them hung the run, or took its cleanup's 8 s, or passed after its timeout.
    data, elapsed = run_script(STUBBORN)
    assert data["seconds"] < 5
    assert elapsed < data["seconds"] + 10
    for case in data["report"]["cases"]:
        results = {r["name"]: r for r in case["turns"][0]["results"]}
        for name in ("forever", "cleanup", "passes"):
            assert results[name]["error"] == f"TimeoutError: grader '{name}' exceeded 1s"
            assert results[name]["passed"] is False
        assert results["fixed"]["passed"] is True
    error, seconds = data["alone"]
    assert error == "TimeoutError: grader 'stubborn' exceeded 1s"
    assert seconds < 5


def test_a_hung_inline_grader_times_out_and_the_rest_of_its_batch_is_graded():
    report, _ = run_script("KEEP = True" + HUNG_INLINE)
    names = [case["name"] for case in report["cases"]]
    assert names == [f"c{i}" for i in range(10)] + ["hung"] + [f"c{i}" for i in range(10, 50)]
    results = {r["name"]: r for r in report["cases"][10]["turns"][0]["results"]}
    assert results["inline_spin"]["error"] == "TimeoutError: grader 'inline_spin' exceeded 1s"
    assert results["fixed"]["passed"] is True
    assert report["summary"]["passed"] == 50 and report["summary"]["errored"] == 1


def test_a_hung_inline_grader_in_a_run_that_only_counts_is_counted_once_with_the_rest():
    report, _ = run_script("KEEP = False" + HUNG_INLINE)
    assert report["cases"] == []
    summary = report["summary"]
    assert (summary["cases"], summary["passed"], summary["errored"]) == (51, 50, 1)
    # The batch is graded again after the timeout; each case is still counted once.
    assert summary["graders"]["fixed"]["passed"] == 51
    assert summary["graders"]["inline_spin"] == {
        "passed": 0,
        "failed": 0,
        "errored": 1,
        "mean_score": None,
        "mean_score_interval": None,
    }


HUNG_STREAMED = (
    HUNG_INLINE.split("report = run_suite", maxsplit=1)[0].replace(
        "entry(InlineSpin(), timeout=1)", "entry(InlineSpin())"
    )
    + """
import os, tempfile
from gradekit import GraderDefaults, Outputs
from gradekit.run.stream import CaseStream
path = os.path.join(tempfile.mkdtemp(), "report.json")
with CaseStream(path, spool=False) as stream:
    suite = Suite("s", lambda: iter(cases))
    report = run_suite(
        suite,
        defaults=GraderDefaults(timeout=1),
        outputs=Outputs(keep_cases=False, stream=stream),
    )
    assert stream.write_json(report) == []
print(open(path, encoding="utf-8").read())
"""
)


def test_a_hung_inline_grader_in_a_streamed_run_is_in_the_report_once_with_the_rest():
    """The grader hangs in a batch (the run's timeout, none of its own): the batch writing
    the cases' texts is cut at the timeout, the cases it wrote are handed over (and counted
    from their texts), the rest graded again, each once."""
    report, _ = run_script(HUNG_STREAMED)
    names = [case["name"] for case in report["cases"]]
    assert names == [f"c{i}" for i in range(10)] + ["hung"] + [f"c{i}" for i in range(10, 50)]
    results = {r["name"]: r for r in report["cases"][10]["turns"][0]["results"]}
    assert results["inline_spin"]["error"] == "TimeoutError: grader 'inline_spin' exceeded 1s"
    summary = report["summary"]
    assert (summary["cases"], summary["passed"], summary["errored"]) == (51, 50, 1)
    assert summary["graders"]["fixed"]["passed"] == 51
