"""run_suite(select=..., resume=...): case selection and resume through the Python API, with what
`--filter` and `--resume` promise on the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest
from runner_graders import entry

import gradekit
from gradekit import ConfigError, GradeResult, ResultsLog, Sample, Selection, SelectionError
from gradekit.suite.model import Case, Suite, Turn

HERE = Path(__file__).parent


@attrs.frozen
class Recorder:
    """Passes when output == expected, and notes every case it grades."""

    kind: ClassVar[str] = "recorder"
    name: str = "recorder"
    seen: list[str] = attrs.field(factory=list, eq=False)
    lock: Any = attrs.field(factory=threading.Lock, eq=False)

    def grade(self, sample: Sample) -> GradeResult:
        with self.lock:
            self.seen.append(sample.case or "")
        ok = sample.output == sample.expected
        return GradeResult(self.kind, self.name, ok, float(ok))


def suite_of(grader: Recorder, count: int = 10, failing: tuple[int, ...] = ()) -> Suite:
    """Cases c0..c{count-1}; those in `failing` fail."""

    def cases():
        for index in range(count):
            output = "wrong" if index in failing else "0"
            sample = Sample(case=f"c{index}", output=output, expected="0")
            yield Case(f"c{index}", (Turn(sample, (entry(grader),)),))

    return Suite("s", cases, path="suite.yaml", case_count=count)


def names(cases) -> list[str]:
    return [case.name for case in cases]


@pytest.mark.parametrize(
    "select",
    ["c[2-4]", ["c2", "c3", "c4"], Selection.names("c2", "c[34]")],
    ids=["one glob", "globs", "Selection"],
)
def test_select_grades_only_the_matching_cases_in_suite_order(select):
    grader = Recorder()
    report = gradekit.run_suite(suite_of(grader), select=select, jobs=4)
    assert names(report.cases) == ["c2", "c3", "c4"]
    assert sorted(grader.seen) == ["c2", "c3", "c4"]
    assert (report.summary.cases, report.summary.passed) == (3, 3)


def test_select_takes_a_function_of_the_case_and_selections_combine():
    grader = Recorder()
    odd = Selection(lambda case: int(case.name[1:]) % 2 == 1, "odd cases")
    report = gradekit.run_suite(suite_of(grader), select=odd & ~Selection.names("c[13]"))
    assert names(report.cases) == ["c5", "c7", "c9"]
    report = gradekit.run_suite(suite_of(Recorder()), select=lambda case: case.name == "c0")
    assert names(report.cases) == ["c0"]


def test_a_selection_matching_nothing_is_an_error_and_grades_nothing():
    grader = Recorder()
    with pytest.raises(SelectionError) as raised:
        gradekit.run_suite(suite_of(grader), select="growth-*")
    assert isinstance(raised.value, ConfigError)
    assert str(raised.value) == (
        "no case of suite.yaml matches name 'growth-*'; nothing was graded: check the pattern "
        "(a glob such as 'growth-*')"
    )
    assert grader.seen == []


def test_resume_grades_only_the_cases_missing_from_the_log(tmp_path):
    log = tmp_path / "results.jsonl"
    first = Recorder()
    gradekit.run_suite(suite_of(first, failing=(3,)), select="c[0-4]", resume=log)
    assert sorted(first.seen) == ["c0", "c1", "c2", "c3", "c4"]

    again = Recorder()
    report = gradekit.run_suite(suite_of(again, failing=(3,)), resume=log, jobs=4)
    assert sorted(again.seen) == ["c5", "c6", "c7", "c8", "c9"]  # only the missing ones
    assert names(report.cases) == [f"c{i}" for i in range(10)]  # resumed ones read back
    fresh = gradekit.run_suite(suite_of(Recorder(), failing=(3,)))
    assert report.summary == fresh.summary  # exact, as if graded in one run
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(data["name"] for data in lines) == [f"c{i}" for i in range(10)]  # each once
    logged = {data["name"]: data for data in lines}
    assert [case.to_dict() for case in report.cases] == [logged[f"c{i}"] for i in range(10)]

    nothing = Recorder()
    assert gradekit.run_suite(suite_of(nothing), resume=log).summary == fresh.summary
    assert nothing.seen == []


def test_a_results_log_streams_the_run_back_without_holding_it(tmp_path):
    path = tmp_path / "results.jsonl"
    gradekit.run_suite(suite_of(Recorder(), failing=(1, 6)), select="c[0-2]", resume=path)
    resumed = []
    with ResultsLog(path, on_resumed=lambda case: resumed.append(case.name)) as log:
        report = gradekit.run_suite(
            suite_of(Recorder(), failing=(1, 6)),
            resume=log,
            jobs=3,
            outputs=gradekit.Outputs(keep_cases=False),
        )
        assert report.cases == ()
        assert (report.summary.cases, report.summary.failed) == (10, 2)
        assert resumed == ["c0", "c1", "c2"]
        assert log.resumed == 3
        assert names(log.cases()) == [f"c{i}" for i in range(10)]
        texts = [json.loads(text)["name"] for text in log.case_texts()]
        assert texts == [f"c{i}" for i in range(10)]
        assert names(log.failing()) == ["c1", "c6"]


def test_a_log_held_open_cannot_be_opened_again_until_closed(tmp_path):
    path = tmp_path / "results.jsonl"
    held = pytest.raises(gradekit.WriteError, match="another gradekit run is using it")
    with ResultsLog(path), held:
        gradekit.run_suite(suite_of(Recorder()), resume=path)
    assert gradekit.run_suite(suite_of(Recorder()), resume=path).summary.cases == 10


def test_keep_cases_may_keep_only_some_in_suite_order_with_an_exact_summary():
    report = gradekit.run_suite(
        suite_of(Recorder(), count=40, failing=(30, 2, 17)),
        jobs=8,
        outputs=gradekit.Outputs(keep_cases=lambda case: case.outcome != "pass"),
    )
    assert names(report.cases) == ["c2", "c17", "c30"]
    assert (report.summary.cases, report.summary.failed) == (40, 3)


KILLED_RUN = """
import sys, time
from pathlib import Path
import attrs
from typing import ClassVar
import gradekit
from gradekit import GradeResult, Sample
from gradekit.suite.model import Case, Suite, Turn
from runner_graders import entry

@attrs.frozen
class Slow:
    kind: ClassVar[str] = "slow"
    name: str = "slow"
    def grade(self, sample: Sample) -> GradeResult:
        with open("graded.log", "a") as out:
            out.write(sample.case + "\\n")
        time.sleep(0.02)
        return GradeResult(self.kind, self.name, True, 1.0)

def cases():
    for index in range(int(sys.argv[1])):
        sample = Sample(case=f"c{index:03d}", output="0")
        yield Case(f"c{index:03d}", (Turn(sample, (entry(Slow()),)),))

report = gradekit.run_suite(Suite("s", cases), resume="results.jsonl", jobs=2)
print(report.summary.cases, [c.name for c in report.cases] == sorted(c.name for c in report.cases))
"""


def run_script(folder: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    return subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigkill_mid_run_then_resume_loses_nothing_and_grades_nothing_twice(tmp_path):
    cases = 120
    process = run_script(tmp_path, str(cases))
    log = tmp_path / "results.jsonl"
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_bytes().count(b"\n") >= 10):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    finished = {json.loads(line)["name"] for line in log.read_text().split("\n")[:-1]}
    assert 10 <= len(finished) < cases
    graded_before = len((tmp_path / "graded.log").read_text().splitlines())

    process = run_script(tmp_path, str(cases))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert out.split() == [str(cases), "True"]
    graded_after = (tmp_path / "graded.log").read_text().splitlines()[graded_before:]
    assert not finished & set(graded_after), "a finished case was graded again"
    lines = [json.loads(line)["name"] for line in log.read_text().splitlines()]
    assert sorted(lines) == [f"c{i:03d}" for i in range(cases)]  # each once, none lost
