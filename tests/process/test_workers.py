"""Warm workers (process isolation): reused grade after grade, replaced after a timeout or a
crash, put back between grades, gone after the run, and the sandbox holds in every grade."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from hostile_graders import MODES
from liveness import alive
from worker_graders import Attack, Where, entry

from gradekit import Sample
from gradekit.process import workers
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn


def suite_of(graders, outputs, workspace=None):
    cases = [
        Case(f"c{i}", (Turn(Sample(output=out, workspace=workspace), tuple(graders)),))
        for i, out in enumerate(outputs)
    ]
    return Suite("s", lambda: iter(cases))


def results(report, name="where"):
    return [
        next(r.result for r in case.turns[0].results if r.result.name == name)
        for case in report.cases
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_timeout_or_a_crash_costs_that_grade_and_its_worker_only(mode, monkeypatch):
    token = uuid.uuid4().hex  # bubblewrap's workers inherit it: found by it after the run
    monkeypatch.setenv("GRADEKIT_TEST_RUN", token)
    graders = [entry(Where(), isolation="process", timeout=1, sandbox=mode)]
    outputs = ["ok", "ok", "hang", "ok", "crash", "ok", "exit", "ok", "ok"]
    report = run_suite(suite_of(graders, outputs), jobs=1)
    got = results(report)
    assert got[2].error == "TimeoutError: grader 'where' exceeded 1s"
    assert got[4].error == (
        "ChildProcessError: grader 'where' crashed its process (SIGSEGV); fix the grader "
        "(run it with isolation: thread to see the error)"
    )
    assert got[6].error == (
        "ChildProcessError: grader 'where' ended its process with exit code 3 before "
        "returning a result; a grader must return a GradeResult, not exit"
    )
    pid = [r.details["worker"] if r.details else None for r in got]
    assert [r.error is None for r in got] == [o == "ok" for o in outputs]
    assert pid[0] == pid[1]  # warm: the same worker grades again
    assert pid[3] != pid[1] and pid[5] != pid[3] and pid[7] != pid[5]  # replaced each time
    assert pid[7] == pid[8]
    assert [r.details["output"] for r in got if r.details] == [o for o in outputs if o == "ok"]
    assert workers.live_pids() == []  # the run ended: so did its workers
    host_pids = [r.details["pid"] for r in got if r.details]
    if mode == "none":
        assert not any(alive(pid) for pid in host_pids)
    else:
        assert lingering_with(token) == []


def test_many_grades_on_few_workers_come_back_right_and_in_order(tmp_path):
    pids = tmp_path / "pids"
    graders = [entry(Where(pids=str(pids)), isolation="process", sandbox="none")]
    outputs = [f"out-{i}" for i in range(300)]
    report = run_suite(suite_of(graders, outputs), jobs=3)
    assert [case.name for case in report.cases] == [f"c{i}" for i in range(300)]
    assert [r.details["output"] for r in results(report)] == outputs
    used = pids.read_text().split()
    assert len(used) == 300  # each grade ran once
    assert len(set(used)) <= 3  # on at most one worker per job
    assert workers.live_pids() == []


@pytest.mark.parametrize("mode", MODES)
def test_what_a_grade_changes_is_put_back_before_the_next(mode):
    graders = [entry(Where(), isolation="process", sandbox=mode)]
    report = run_suite(suite_of(graders, ["ok", "dirty", "ok", "thread", "ok"]), jobs=1)
    first, dirty, after, thread, last = (r.details for r in results(report))
    assert dirty["worker"] == after["worker"] == thread["worker"] == first["worker"]
    # Put back: working folder, environment, sys.path, the private temp folder.
    assert after["cwd"] == first["cwd"] and after["mark"] is None and not after["path_mark"]
    assert after["tmp"] == [] and first["tmp"] == []
    # Not put back (documented): module globals count on in the same worker.
    assert after["grades"] == first["grades"] + 2
    # A grade that leaves a thread running retires its worker.
    assert last["worker"] != thread["worker"] and last["grades"] == 1


def test_a_grader_that_mutates_a_module_global_sees_it_in_the_next_grade_only_in_its_worker():
    graders = [entry(Where(), isolation="process", sandbox="none", timeout=1)]
    got = results(run_suite(suite_of(graders, ["ok", "ok", "hang", "ok"]), jobs=1))
    assert [r.details["grades"] for r in got if r.details] == [1, 2, 1]  # a fresh worker


@pytest.mark.parametrize("mode", MODES)
def test_the_sandbox_holds_in_every_grade_of_a_warm_worker(mode, tmp_path):
    secret = tmp_path / "host" / "secret.txt"  # a host file outside the workspace
    secret.parent.mkdir()
    secret.write_text("the host's secret")
    target = tmp_path / "host" / f"planted-{uuid.uuid4().hex}"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    attack = Attack(secret=str(secret), target=str(target))
    graders = [entry(attack, isolation="process", sandbox=mode)]
    outputs = [str(i) for i in range(4)]
    got = results(run_suite(suite_of(graders, outputs, str(workspace)), jobs=1), "attack")
    details = [r.details for r in got]
    assert len({d["worker"] for d in details}) == 1  # one warm worker graded them all
    planted = sorted(path.name for path in target.parent.glob("planted-*"))
    if mode == "none":
        assert all(d["read"] == "the host's secret" and d["wrote"] is True for d in details)
        assert len(planted) == 4
    else:
        assert all(d["read"] == "refused: FileNotFoundError" for d in details)
        assert all(d["wrote"] == "refused: FileNotFoundError" for d in details)  # not there
        assert planted == []


INTERRUPTED = """
import signal, sys
sys.path[:0] = {paths!r}
from worker_graders import Where, entry
from gradekit import Sample
from gradekit.run.runner import run_suite
from gradekit.run.exits import stopping_on
from gradekit.suite.model import Case, Suite, Turn

graders = [entry(Where(), isolation="process", sandbox={mode!r})]
outputs = ["ok"] * 50 + ["hang"] * 8
cases = [Case(f"c{{i}}", (Turn(Sample(output=o), tuple(graders)),)) for i, o in enumerate(outputs)]
with stopping_on(signal.SIGINT, signal.SIGTERM):
    report = run_suite(Suite("s", lambda: iter(cases)), jobs=4)
print("interrupted" if not report.complete else "complete", len(report.cases), flush=True)
"""


@pytest.mark.parametrize("mode", MODES)
def test_an_interrupted_run_leaves_no_worker_behind(mode):
    token = uuid.uuid4().hex  # in the environment of the run and of every worker it starts
    script = INTERRUPTED.format(paths=sys.path, mode=mode)
    env = {**os.environ, "GRADEKIT_TEST_RUN": token}
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        deadline = time.monotonic() + 60
        while len([p for p in with_token(token) if p != process.pid]) < 5:  # 4 workers and more
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.05)
        time.sleep(1.0)  # the hung grades hang now
        process.terminate()
        out, _ = process.communicate(timeout=30)
    finally:
        process.kill()
    assert out.startswith("interrupted")
    assert lingering_with(token) == []


def with_token(token):
    """Live processes whose environment holds `token`."""
    found = []
    for folder in Path("/proc").iterdir():
        if not folder.name.isdigit():
            continue
        try:
            if token.encode() in (folder / "environ").read_bytes() and alive(int(folder.name)):
                found.append(int(folder.name))
        except OSError:
            continue
    return found


def lingering_with(token, wait=2.0):
    """`with_token(token)` once none is left, or after `wait` seconds."""
    deadline = time.monotonic() + wait
    found = with_token(token)
    while found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = with_token(token)
    return found
