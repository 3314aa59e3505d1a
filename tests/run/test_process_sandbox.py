"""Process-isolated graders: nothing they start outlives their grade, and in bubblewrap they
read no secret and write nowhere on the host."""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pytest
from hostile_graders import (
    MODES,
    Sleepers,
    Snoop,
    Watch,
    kill_all,
    lingering,
    marker,
    needs_bwrap,
)
from runner_graders import Echo, entry, one_turn_suite

from gradekit import Sample
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn

SHADOW = Path("/etc/shadow")


def results_of(report):
    return {record.result.name: record.result for record in report.cases[0].turns[0].results}


@pytest.mark.parametrize("hang", [False, True], ids=["returns", "times-out"])
@pytest.mark.parametrize("mode", MODES)
def test_children_of_a_process_isolated_grader_never_outlive_its_grade(mode, hang):
    duration = marker()
    grader = Sleepers(duration=duration, count=3, hang=hang)
    graders = [entry(grader, isolation="process", timeout=1, sandbox=mode), entry(Echo())]
    started = time.monotonic()
    with Watch(duration) as watch:
        report = run_suite(one_turn_suite(graders, ["0"]))
    assert time.monotonic() - started < 10
    result = results_of(report)["sleepers"]
    if hang:
        assert result.error == "TimeoutError: grader 'sleepers' exceeded 1s"
        assert watch.most == 3  # they ran until the grade ended
    else:
        assert result.passed, result.error
    left = lingering(duration)
    kill_all(left)
    assert left == []


@pytest.mark.parametrize("mode", MODES)
def test_a_setsid_grandchild_of_a_process_isolated_grader(mode):
    duration = marker()
    grader = Sleepers(duration=duration, count=2, detach=True)
    report = run_suite(one_turn_suite([entry(grader, isolation="process", sandbox=mode)], ["0"]))
    assert results_of(report)["sleepers"].passed
    left = lingering(duration)
    kill_all(left)
    # They left the worker's process group; the worker is their subreaper (sandbox: none)
    # or the sandbox's PID namespace holds them (bwrap): killed when the grade ends either way.
    assert left == []


@pytest.mark.skipif(not os.access(SHADOW, os.R_OK), reason="reading /etc/shadow needs root")
@pytest.mark.parametrize("mode", MODES)
def test_a_process_isolated_grader_reads_no_secret_and_writes_nowhere(mode, tmp_path):
    target = Path(sys.prefix) / f"planted-{uuid.uuid4().hex}.txt"  # gradekit's virtualenv
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "answer.txt").write_text("42")
    graders = [
        entry(Snoop(name="secret", target=str(target)), isolation="process", sandbox=mode),
        entry(
            Snoop(name="work", path=str(workspace / "answer.txt"), target=str(workspace / "x")),
            isolation="process",
            sandbox=mode,
        ),
    ]
    case = Case("c0", (Turn(Sample(output="0", workspace=str(workspace)), tuple(graders)),))
    try:
        results = results_of(run_suite(Suite("s", lambda: iter([case]))))
        planted = target.exists()
    finally:
        target.unlink(missing_ok=True)
    secret, work = results["secret"].details, results["work"].details
    assert work["read"] == "42"  # the sample's workspace is there to be graded
    if mode == "none":
        assert secret == {"read": SHADOW.read_text(), "wrote": True}
        assert work["wrote"] is True
        assert planted
    else:
        # Read-only (EROFS) where it can be seen, and nothing is written to the host.
        assert secret == {"read": "refused: PermissionError", "wrote": "refused: OSError"}
        assert work["wrote"] == "refused: OSError"
        assert not planted
        assert not (workspace / "x").exists()


@needs_bwrap
def test_crashes_and_exits_are_told_apart_in_bubblewrap():
    from runner_graders import Crash, Exit

    graders = [
        entry(Exit(), isolation="process", sandbox="bwrap"),
        entry(Crash(), isolation="process", sandbox="bwrap"),
    ]
    results = results_of(run_suite(one_turn_suite(graders, ["0"])))
    assert results["exit"].error == (
        "ChildProcessError: grader 'exit' ended its process with exit code 1 before returning "
        "a result; a grader must return a GradeResult, not exit"
    )
    assert results["crash"].error == (
        "ChildProcessError: grader 'crash' crashed its process (SIGSEGV); fix the grader "
        "(run it with isolation: thread to see the error)"
    )


@needs_bwrap
def test_a_program_grader_given_isolation_process_runs_its_command_in_its_own_sandbox(capfd):
    import gradekit

    code = "print(open('/etc/passwd').read()[:4]); open('/etc/shadow').read()"
    config = {"command": [sys.executable, "-c", code], "sandbox": "bwrap"}
    program = gradekit.create("program", config=config)
    graders = [entry(program, isolation="process", sandbox="bwrap")]
    result = results_of(run_suite(one_turn_suite(graders, ["0"])))["program"]
    # Graded in the runner's process (no worker): the command's own sandbox holds.
    assert result.outcome == "fail", result.error
    assert result.details["stdout"] == "root\n"
    assert "PermissionError" in result.details["stderr"]
    assert "warning" not in capfd.readouterr().err
