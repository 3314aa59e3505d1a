"""The blocking lane: cases whose graders all run commands, graded wholly in worker threads.

Real `program` graders running real commands: the run's timeouts still kill the whole process
group, `jobs` still bounds the commands running at once (lane cases and loop cases together),
a grade stuck outside its command is abandoned and its case goes on, and Ctrl-C kills what
runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import attrs
from hostile_graders import lingering, marker, processes_with, sleepers_code
from runner_graders import entry

import gradekit
from gradekit import GradeResult, Sample
from gradekit.run.dispatch import is_blocking
from gradekit.run.runner import run_suite
from gradekit.run.settings import Settings
from gradekit.suite.model import Case, Suite, Turn

PY = sys.executable
HERE = Path(__file__).parent


def program(**config: object) -> gradekit.Grader:
    return gradekit.create("program", config={"sandbox": "none", **config})


def suite_of(cases: list[Case]) -> Suite:
    return Suite("s", lambda: iter(cases))


def one_case(name: str, *entries: object, output: str = "x") -> Case:
    return Case(name, (Turn(Sample(output=output), tuple(entries)),))  # type: ignore[arg-type]


def test_the_blocking_rule() -> None:
    lane = entry(program(command=["true"]))
    assert is_blocking(lane, Settings())
    # A command kind is graded here whatever isolation says: its command has its own sandbox.
    assert is_blocking(lane, Settings(isolation="process"))
    assert is_blocking(entry(program(command=["true"]), isolation="process"), Settings())
    assert not is_blocking(entry(gradekit.create("contains", config={"values": ["x"]})), Settings())


def test_the_runs_timeout_kills_the_commands_whole_group() -> None:
    duration = marker()
    hung = program(command=[PY, "-c", sleepers_code(duration, 2, detach=False, hang=True)])
    quick = program(command=[PY, "-c", "print('ok')"], expected_output="ok")
    cases = [one_case("hung", entry(hung, timeout=1)), one_case("quick", entry(quick))]
    started = time.monotonic()
    report = run_suite(suite_of(cases), jobs=1)
    # The program's own timeout is 30 s: only the run's (1 s) ends the hung command this soon.
    assert time.monotonic() - started < 5.0
    hung_result = report.cases[0].turns[0].results[0].result
    assert hung_result.error == "TimeoutError: grader 'program' exceeded 1s"
    assert report.cases[1].outcome == "pass"
    assert lingering(duration) == []


CONCURRENT = (
    "import os, sys, time\n"
    "log = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT)\n"
    "os.write(log, b'+\\n'); time.sleep(0.3); os.write(log, b'-\\n')\n"
)


def most_at_once(log: Path) -> int:
    running = most = 0
    for line in log.read_text().split():
        running += 1 if line == "+" else -1
        most = max(most, running)
    return most


def test_jobs_bounds_the_commands_of_lane_and_loop_cases_together(tmp_path: Path) -> None:
    log = tmp_path / "log"
    command = program(command=[PY, "-c", CONCURRENT, str(log)])
    other = gradekit.create("contains", config={"values": ["x"]})
    # A turn with two graders is graded on the event loop; a lone command, in the lane.
    cases = [
        one_case(f"c{index}", entry(command), *([entry(other)] if index % 2 else []))
        for index in range(12)
    ]
    report = run_suite(suite_of(cases), jobs=2)
    assert report.summary.passed == 12
    assert most_at_once(log) == 2


def test_a_case_of_several_turns_ends_at_an_error_that_ends_it() -> None:
    ok = program(command=[PY, "-c", "print(input())"], expected_output="first")
    missing = program(command=["no-such-command-gradekit"])
    case = Case(
        "c",
        (
            Turn(Sample(output="first"), (entry(ok),)),
            Turn(Sample(output="second"), (entry(missing, fail_on_error=True),)),
            Turn(Sample(output="first"), (entry(ok),)),
        ),
    )
    [graded] = run_suite(suite_of([case]), jobs=1).cases
    assert [turn.passed for turn in graded.turns] == [True, False, False]
    assert graded.turns[1].errored and graded.turns[2].skipped
    assert graded.errored


@attrs.frozen
class Stuck:
    """A blocking grader that ignores `cancel` and hangs on the output `stuck`."""

    kind = "stuck"
    name = "stuck"
    release: threading.Event = attrs.field(factory=threading.Event, eq=False)

    def grade(self, sample: Sample) -> GradeResult:
        return self.grade_blocking(sample, threading.Event())

    def grade_blocking(self, sample: Sample, cancel: threading.Event) -> GradeResult:
        if sample.output == "stuck":
            self.release.wait(30)
        return GradeResult(self.kind, self.name, True, 1.0)


def test_a_grade_stuck_outside_its_command_is_abandoned_and_its_case_goes_on() -> None:
    stuck = Stuck()
    try:
        case = Case(
            "c",
            (
                Turn(Sample(output="stuck"), (entry(stuck, timeout=0.5),)),
                Turn(Sample(output="fine"), (entry(stuck, timeout=0.5),)),
            ),
        )
        others = [one_case(f"o{index}", entry(stuck), output="fine") for index in range(3)]
        started = time.monotonic()
        report = run_suite(suite_of([case, *others]), jobs=1)
        assert time.monotonic() - started < 5.0
    finally:
        stuck.release.set()
    first, second = report.cases[0].turns
    assert first.results[0].result.error == "TimeoutError: grader 'stuck' exceeded 0.5s"
    assert second.passed
    assert [case.outcome for case in report.cases[1:]] == ["pass"] * 3


STOPPED = """
import sys
import gradekit
from gradekit import Sample
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn
from runner_graders import entry

grader = gradekit.create("program", config={"sandbox": "none", "command": sys.argv[1:]})
cases = [Case(f"c{i}", (Turn(Sample(output="x"), (entry(grader),)),)) for i in range(4)]
report = run_suite(Suite("s", lambda: iter(cases)), jobs=2)
print("complete", report.complete, flush=True)
"""


def test_ctrl_c_kills_the_commands_in_progress(tmp_path: Path) -> None:
    duration = marker()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    script = tmp_path / "sleepers.py"  # the marker only on the sleepers' command lines
    script.write_text(sleepers_code(duration, 1, detach=False, hang=True))
    process = subprocess.Popen(
        [PY, "-c", STOPPED, PY, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 20
        while len(processes_with(duration)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(processes_with(duration)) == 2  # both jobs' commands are running
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "complete False" in out, json.dumps([out, err])
    assert lingering(duration) == []
