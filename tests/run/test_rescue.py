"""Which suites `gradekit run` supervises (`may_hold_the_gil`), and the file a supervised run
writes each finished case to as it ends (`Rescue`): every case, each once, as the lines of a
results log that a run can resume from, while the reports stay what they were."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import attrs
import pytest
from timings import without_durations

import gradekit
from gradekit import ResultsLog
from gradekit.cli.supervise import stuck_case
from gradekit.report.json import case_json
from gradekit.run.rescue import (
    CHUNK,
    Mark,
    Marks,
    Rescue,
    gather,
    may_hold_the_gil,
    running,
    written_part,
)
from gradekit.run.settings import Outputs
from gradekit.run.stream import CaseStream

GRADERS = """
def ok(ctx):
    return str(ctx.agent_response) == str(ctx.ground_truth)
"""


def _suite(tmp_path: Path, text: str, dataset: str | None = None) -> gradekit.Suite:
    # Module names are shared by the process: one per test.
    module = "rescue_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{module}.py").write_text(GRADERS)
    text = text.replace("'graders:ok'", f"'{module}:ok'")
    if dataset is not None:
        (tmp_path / "data.jsonl").write_text(dataset)
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return gradekit.load_suite(path)


CASES = "cases:\n  - {name: a, output: '1', expected: 1}\n"


@pytest.mark.parametrize(
    ("graders", "isolation", "holders"),
    [
        ("[{kind: equality}, {kind: regex, pattern: x}, {kind: numeric}]", None, ()),
        ("[{kind: code, grader: 'graders:ok', name: mine}]", None, ("mine",)),
        ("[{kind: code, grader: 'graders:ok', isolation: process}]", None, ()),
        ("[{kind: code, grader: 'graders:ok'}]", "process", ()),
        ("[{kind: code, grader: 'graders:ok', isolation: thread}]", "process", ("ok",)),
        (
            "[{kind: any, name: either, graders: [{kind: code, grader: 'graders:ok'}]}]",
            None,
            ("either",),
        ),
        ("[{kind: all, graders: [{kind: equality}, {kind: contains, values: ['1']}]}]", None, ()),
    ],
    ids=[
        "builtin",
        "code",
        "code-process",
        "run-process",
        "own-thread",
        "composite",
        "builtin-composite",
    ],
)
def test_a_suite_may_hold_the_gil_when_it_runs_user_code_in_a_thread(
    tmp_path: Path, graders: str, isolation: str | None, holders: tuple[str, ...]
) -> None:
    suite = _suite(tmp_path, f"name: s\ngraders: {graders}\n{CASES}")
    assert may_hold_the_gil(suite, isolation) == holders  # type: ignore[arg-type]


def test_a_case_level_code_grader_counts_and_dataset_lines_with_graders_are_unknown(
    tmp_path: Path,
) -> None:
    suite = _suite(
        tmp_path,
        "name: s\ngraders: [{kind: equality}]\ncases:\n  - {name: a, output: '1', expected: '1',"
        " graders: [{kind: code, grader: 'graders:ok'}]}\n",
    )
    assert may_hold_the_gil(suite, None) == ("ok",)
    plain = '{"name": "b", "output": "1", "expected": "1"}\n'
    suite = _suite(tmp_path, "name: s\ngraders: [{kind: equality}]\ndataset: data.jsonl\n", plain)
    assert may_hold_the_gil(suite, None) == ()  # the lines give no graders of their own
    own = '{"name": "b", "output": "1", "graders": [{"kind": "equality"}]}\n'
    suite = _suite(tmp_path, "name: s\ngraders: [{kind: equality}]\ndataset: data.jsonl\n", own)
    assert may_hold_the_gil(suite, None) == ("*",)  # made as the lines are read: not known


def test_a_supervised_run_writes_every_case_once_as_a_log_and_streams_the_same_report(
    tmp_path: Path,
) -> None:
    lines = "".join(
        json.dumps({"name": f"c{i}", "output": str(i % 3), "expected": "1"}) + "\n"
        for i in range(3000)
    )
    suite = _suite(
        tmp_path,
        "name: s\ngraders: [{kind: code, grader: 'graders:ok'}, {kind: equality}]\n"
        "dataset: data.jsonl\n",
        lines,
    )
    reports = {}
    for rescued in (False, True):
        fd = os.open(tmp_path / "rescue.jsonl", os.O_RDWR | os.O_CREAT)  # mapped
        path = tmp_path / f"r-{rescued}.json"
        with CaseStream(path, spool=False) as stream:
            rescue = Rescue(fd) if rescued else None
            report = gradekit.run_suite(
                suite, jobs=2, outputs=Outputs(keep_cases=False, stream=stream, rescue=rescue)
            )
            stream.write_json(report)
        os.close(fd)
        reports[rescued] = json.loads(path.read_text())
    assert without_durations(reports[True]["cases"]) == without_durations(reports[False]["cases"])
    assert (tmp_path / "rescue.jsonl").stat().st_size == CHUNK  # reserved, the rest zeros
    written_part(str(tmp_path / "rescue.jsonl"))
    written = (tmp_path / "rescue.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["name"] for line in written) == sorted(
        f"c{i}" for i in range(3000)
    )
    # The file is a results log: a run through it takes every case and grades none.
    with ResultsLog(tmp_path / "rescue.jsonl") as log:
        resumed = gradekit.run_suite(suite, resume=log)
        assert log.resumed == 3000
    assert resumed.summary.passed == 1000


@pytest.mark.parametrize("flags", [os.O_RDWR, os.O_WRONLY | os.O_APPEND], ids=["mapped", "written"])
def test_rescue_writes_a_case_report_as_its_log_line(tmp_path: Path, flags: int) -> None:
    suite = _suite(tmp_path, f"name: s\ngraders: [{{kind: equality}}]\n{CASES}")
    (case,) = gradekit.run_suite(suite).cases
    fd = os.open(tmp_path / "out.jsonl", flags | os.O_CREAT)
    rescue = Rescue(fd, replace=True)
    kept = rescue.secure([(0, case)])
    big = attrs.evolve(case, name="x" * CHUNK)  # past the first chunk: the map grows
    rescue.secure([(1, big)])
    os.close(fd)
    written_part(str(tmp_path / "out.jsonl"))
    text = (tmp_path / "out.jsonl").read_text()
    assert text == case_json(case) + "\n" + case_json(big) + "\n"
    ((position, text),) = kept
    assert position == 0 and text.report() == case  # type: ignore[union-attr]


SLOW = """
import time

def slow(ctx):
    time.sleep(0.5)
    return True
"""


def test_a_stuck_case_is_reported_as_the_runner_reports_a_timed_out_grade(tmp_path: Path) -> None:
    # The runner's own record of a grade past its timeout (its watch abandons it), and the
    # record the supervisor makes of the same grade abandoned: the same JSON.
    (tmp_path / "slowgraders.py").write_text(SLOW)
    (tmp_path / "suite.yaml").write_text(
        "name: s\ncases:\n  - {name: a, output: x, expected: y, graders: [{kind: code, "
        "grader: 'slowgraders:slow', timeout: 0.1}]}\n"
    )
    suite = gradekit.load_suite(tmp_path / "suite.yaml")
    (graded,) = gradekit.run_suite(suite).cases
    mark = Mark(1, hash("a"), None, 0, 0, time.monotonic() - 3.0, 0.1)
    stuck = stuck_case(suite, mark, 4096)
    assert stuck is not None
    assert without_durations(stuck.to_dict()) == without_durations(graded.to_dict())
    (record,) = stuck.turns[0].results
    assert record.result.error == "TimeoutError: grader 'slow' exceeded 0.1s"
    assert record.duration_ms == 100.0
    assert stuck.duration_ms >= 3000.0  # since the grade began
    assert stuck_case(suite, mark._replace(name_hash=hash("b")), 4096) is None


def test_gather_appends_what_the_log_lacks_once_after_its_last_whole_line(tmp_path: Path) -> None:
    suite = _suite(tmp_path, f"name: s\ngraders: [{{kind: equality}}]\n{CASES}")
    (case,) = gradekit.run_suite(suite).cases
    other = attrs.evolve(case, name="b")
    stuck = attrs.evolve(case, name="stuck", passed=False, errored=True)
    log, rescued = tmp_path / "log.jsonl", tmp_path / "rescued.jsonl"
    # The log as a killed run left it: a line cut short at the end.
    log.write_text(case_json(case) + "\n" + case_json(other)[:20])
    rescued.write_text(case_json(case) + "\n" + case_json(other) + "\n")
    gather(str(rescued), str(log), stuck)
    gather(str(rescued), str(log), stuck)  # again: nothing is added twice
    lines = log.read_text().splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["a", "b", "stuck"]
    with ResultsLog(log) as results:  # a log a run resumes from: nothing is graded again
        resumed = gradekit.run_suite(suite, resume=results)
        assert results.resumed == 1
    assert [case.name for case in resumed.cases] == ["a"]


def test_marks_hold_each_threads_last_grade(tmp_path: Path) -> None:
    suite = _suite(tmp_path, f"name: s\ngraders: [{{kind: equality}}]\n{CASES}")
    (case,) = list(suite.cases())
    marks = Marks()
    marks.begin(case, 0, 0, 5.0)
    marks.begin(attrs.evolve(case, attempt=2), 1, 3, 7.0)  # this thread's next grade
    other = threading.Thread(target=marks.begin, args=(case, 0, 1, 9.0))
    other.start()
    other.join()
    read = sorted(marks.read(), key=lambda mark: mark.seconds)
    assert [(m.thread, m.attempt, m.turn, m.grader, m.seconds) for m in read] == [
        (threading.get_native_id(), 2, 1, 3, 7.0),
        (other.native_id, None, 0, 1, 9.0),
    ]
    assert read[0].of(attrs.evolve(case, attempt=2)) and not read[0].of(case)
    assert 0 <= time.monotonic() - read[0].started < 5
    marks.clear()
    assert marks.read() == []


LOOPING = """
import re, sys, threading, time

def loop():
    print(threading.get_native_id(), flush=True)
    time.sleep(0.2)
    re.fullmatch("(a|a)*", "a" * 40 + "b")  # in C, holding the GIL, for hours

threading.Thread(target=loop, daemon=True).start()
while True:
    time.sleep(0.01)  # wakes up and waits for the GIL
"""


def test_running_finds_the_thread_that_loops_in_c_holding_the_gil() -> None:
    process = subprocess.Popen([sys.executable, "-c", LOOPING], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        looping = int(process.stdout.readline())
        time.sleep(1.0)
        assert running(process.pid) == {looping}
    finally:
        process.kill()
        process.wait()
