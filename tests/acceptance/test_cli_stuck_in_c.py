"""A thread-isolated grader stuck in C code holding the GIL cannot keep `gradekit run` from
stopping (issue 30): Python's `re` backtracking on `(a|a)*` against 40 `a`s and a `b` runs
for hours without letting any Python code of its process run, signal handlers included.
The command's supervising process acts for it: SIGTERM, SIGHUP and SIGINT end the run within
a bounded time, with its reports (the cases that finished, those of the stuck grade's own
batch included, and the stuck case timed out once its grade is past its timeout) and the usual
exit code; a run with no signal goes on without each stuck grade
(test_cli_stuck_grade.py; here, several). A suite of gradekit's own kinds is not supervised:
one process, as before. Real runs, real signals, a real C loop."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from processes import killed_at_the_end, start, wait_until

pytestmark = pytest.mark.slow  # the supervisor's grace alone is 10 s

Write = Callable[[str, str], Path]

STUCK = """
import re, threading, time

def stuck(ctx):
    time.sleep({sleep})
    open({marker!r}, "w").close()
    # Python's re backtracks in C holding the GIL: no thread of this process can run.
    return re.fullmatch("(a|a)*", "a" * 40 + "b") is not None

def stuck_later(ctx):
    open({marker!r}, "w").close()
    # A thread of the grader's own loops in C: the grade waits for the GIL it holds.
    threading.Thread(target=stuck, args=(ctx,), daemon=True).start()
    time.sleep(0.5)
    return True
"""

QUICK = "\n".join(
    f'  - {{name: quick-{i}, output: "{i}", expected: {i}, graders: [{{kind: numeric}}]}}'
    for i in range(4)
)

# The supervisor's grace (10 s of a silent run after the signal), the reports written by the
# supervisor, and a shared machine's slack.
BOUND = 30


def _suite(
    write: Write,
    tmp_path: Path,
    *,
    sleep: float = 0,
    timeout: float = 2,
    grader: str = "stuck",
) -> Path:
    marker = tmp_path / "stuck-started"
    write("graders.py", STUCK.format(marker=str(marker), sleep=sleep))
    stuck = f"graders: [{{kind: code, grader: 'graders:{grader}', timeout: {timeout}}}]"
    write(
        "suite.yaml",
        f"name: stuck\nsandbox: none\ncases:\n{QUICK}\n  - {{name: stuck, output: x, {stuck}}}\n"
        "  - {name: after, output: '1', expected: 1, graders: [{kind: numeric}]}\n",
    )
    return marker


def test_without_a_supervisor_the_stuck_grade_keeps_a_signal_from_acting(
    write: Write, tmp_path: Path
) -> None:
    # The failure the supervisor is for: `run_suite` in a process of its own (no supervisor)
    # gets SIGINT while a grade loops in C holding the GIL; its handler never runs.
    marker = _suite(write, tmp_path)
    script = (
        "import gradekit\n"
        "gradekit.run_suite(gradekit.load_suite('suite.yaml'), jobs=1)\n"
        "print('ended')\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    with killed_at_the_end(tmp_path / "no-pids", process):
        wait_until(process, marker.exists, "the stuck grade")
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        time.sleep(12)  # longer than the supervisor's grace: still stuck
        assert process.poll() is None
        process.kill()
        out, _ = process.communicate()
    assert "ended" not in out


SIGNALS = {
    # As `kill`, CI systems and container runtimes do: the command's pid alone. The stuck
    # grade's timeout (30 s) is not past when the supervisor's grace is: the run is ended as
    # an interrupted one, without the case in progress.
    "sigterm": (signal.SIGTERM, False, 143, ("-o", "r.json", "--junit", "r.xml")),
    # As a closed terminal and Ctrl-C do: the whole process group. The stuck grade's timeout
    # (2 s) is past first: the case is reported timed out, and the run ends there.
    "sighup-group": (signal.SIGHUP, True, 129, ("-o", "r.json", "--resume", "r.jsonl")),
    "sigint-group": (signal.SIGINT, True, 130, ("-o", "r.json", "--markdown", "r.md")),
}


@pytest.mark.parametrize("how", SIGNALS.values(), ids=SIGNALS.keys())
def test_a_signal_ends_a_run_stuck_in_c_within_a_bound_with_its_reports(
    write: Write, tmp_path: Path, how: tuple[signal.Signals, bool, int, tuple[str, ...]]
) -> None:
    signum, group, code, args = how
    past = group  # the stuck grade goes past its timeout before the run is ended
    # Stuck at once: the quick cases are in its batch.
    marker = _suite(write, tmp_path, timeout=2 if past else 30)
    process = start(tmp_path, "suite.yaml", "--jobs", "1", *args, tmp=tmp_path / "tmp")
    with killed_at_the_end(tmp_path / "no-pids", process):
        wait_until(process, marker.exists, "the stuck grade")
        time.sleep(0.5)  # inside re.fullmatch now
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        started = time.monotonic()
        _, err = process.communicate(timeout=BOUND + 30)
        assert time.monotonic() - started < BOUND, err
    assert process.returncode == code, err
    assert "Traceback" not in err, err
    if past:
        assert "gradekit: case 'stuck': grader 'stuck' has run" in err, err
        assert "its reports hold the cases that finished" in err, err
    else:
        assert "a grader of user code run in a thread ('stuck') is stuck in C code" in err, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["complete"], report["passed"]) == (False, False)
    # Graded in the stuck grade's own batch, before it: every one is in the reports; the
    # stuck case timed out once past its timeout. The case after it was not graded.
    finished = [f"quick-{i}" for i in range(4)] + (["stuck"] if past else [])
    assert [case["name"] for case in report["cases"]] == finished
    assert report["summary"]["cases"] == len(finished)
    if past:
        (turn,) = report["cases"][-1]["turns"]
        assert turn["results"][0]["error"] == "TimeoutError: grader 'stuck' exceeded 2s"
    if "--junit" in args:
        assert (tmp_path / "r.xml").read_text().count("<testcase ") == len(finished)
    if "--markdown" in args:
        assert "interrupted" in (tmp_path / "r.md").read_text().splitlines()[0]
    if "--resume" in args:
        lines = (tmp_path / "r.jsonl").read_text().splitlines()
        assert sorted(json.loads(line)["name"] for line in lines) == finished
    assert os.listdir(tmp_path / "tmp") == []  # no scratch file left behind
    assert [name for name in os.listdir(tmp_path) if "gradekit-tmp" in name] == []


def test_cases_finished_before_a_grade_sticks_and_after_its_batch_was_cut_are_reported(
    write: Write, tmp_path: Path
) -> None:
    # The stuck grader waits 2 s first (the GIL free): the run cuts its batch and grades the
    # case after it meanwhile; then the C loop, past the grade's timeout (2 s). The cases
    # before and after are reported, and the stuck one timed out.
    marker = _suite(write, tmp_path, sleep=2)
    process = start(tmp_path, "suite.yaml", "--jobs", "1", "-o", "r.json", tmp=tmp_path / "tmp")
    with killed_at_the_end(tmp_path / "no-pids", process):
        wait_until(process, marker.exists, "the stuck grade")
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=BOUND + 30)
    assert process.returncode == 143, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert [case["name"] for case in report["cases"]] == [
        *(f"quick-{i}" for i in range(4)),
        "stuck",
        "after",
    ]
    (turn,) = report["cases"][4]["turns"]
    assert turn["results"][0]["error"] == "TimeoutError: grader 'stuck' exceeded 2s"


def test_a_run_stuck_in_c_outside_a_grade_says_so_then_stops_on_sigterm(
    write: Write, tmp_path: Path
) -> None:
    # A thread the grader started loops in C: no grade of the run is in it, none is
    # abandoned; the run says so, and a signal still ends it with its reports.
    marker = _suite(write, tmp_path, grader="stuck_later")
    process = start(tmp_path, "suite.yaml", "--jobs", "1", "-o", "r.json", "--timeout", "2")
    with killed_at_the_end(tmp_path / "no-pids", process):
        wait_until(process, marker.exists, "the stuck grade")
        time.sleep(2 + 10 + 3)  # the timeout, the supervisor's grace, slack
        assert process.poll() is None  # the run waits for the call: nothing can end it
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=BOUND + 30)
    assert process.returncode == 143, err
    said = (
        "gradekit: the run has run no Python code for 12 s: a grader of user code run in a "
        "thread ('stuck_later') is likely stuck in C code holding the interpreter's lock "
        "(GIL), past its timeout, which cannot act; SIGTERM or Ctrl-C end the run with its "
        "reports within 10 s (give such a grader `isolation: process`)\n"
    )
    assert said in err, err
    assert err.index(said) < err.index("gradekit: SIGTERM: the run did not act on it")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is False
    assert [case["name"] for case in report["cases"]] == [f"quick-{i}" for i in range(4)]


_TEMPORARY = re.compile(r"^\.r\.json\.gradekit-tmp-(\d+)-")


def _streaming_pid(process: subprocess.Popen[str], folder: Path) -> int:
    """The pid in the name of the JSON report's temporary file: the process that grades."""
    found: list[int] = []

    def streaming() -> bool:
        found[:] = [int(m.group(1)) for n in os.listdir(folder) if (m := _TEMPORARY.match(n))]
        return bool(found)

    wait_until(process, streaming, "the JSON report's temporary file")
    return found[0]


@pytest.mark.parametrize(
    ("graders", "supervised"),
    [
        # gradekit's own kinds: a pattern that backtracks for long (`regex` lets the GIL go).
        ("[{kind: regex, pattern: '^(a+)+$', timeout: 2}]", False),
        # A `code` grader in a process of its own: killed at its timeout, nothing to supervise.
        ("[{kind: code, grader: 'graders:stuck', isolation: process, timeout: 2}]", False),
        # A `code` grader in a thread (waiting 2 s, the GIL free): supervised.
        ("[{kind: code, grader: 'graders:slow', timeout: 3}]", True),
    ],
    ids=["builtin", "code-process", "code-thread"],
)
def test_only_a_suite_whose_graders_may_hold_the_gil_runs_in_a_second_process(
    write: Write, tmp_path: Path, graders: str, supervised: bool
) -> None:
    write(
        "graders.py",
        STUCK.format(marker=str(tmp_path / "m"), sleep=0)
        + "\ndef slow(ctx):\n    time.sleep(2)\n    return True\n",
    )
    write(
        "suite.yaml",
        f"name: one\nsandbox: none\ncases:\n  - {{name: a, output: {'a' * 34}b, graders: "
        f"{graders}}}\n",
    )
    process = start(tmp_path, "suite.yaml", "-o", "r.json")
    with killed_at_the_end(tmp_path / "no-pids", process):
        grading = _streaming_pid(process, tmp_path)
        _, err = process.communicate(timeout=60)
    assert process.returncode in (0, 1), err
    assert (grading != process.pid) is supervised
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["cases"] == 1


def test_each_stuck_grade_is_abandoned_once_and_the_run_ends_with_every_case(
    write: Write, tmp_path: Path
) -> None:
    # Two grades stuck in C, two jobs, a results log: each stuck case is recorded timed out
    # once (the run forked again goes on from the log, which holds it), every other case is
    # graded, and the log and the report hold each case once.
    write("graders.py", STUCK.format(marker=str(tmp_path / "m"), sleep=0))
    stuck = "graders: [{kind: numeric}, {kind: code, grader: 'graders:stuck', timeout: 1}]"
    numeric = "graders: [{kind: numeric}]"
    names = ["q0", "stuck-a", "q1", "q2", "stuck-b", "q3"]
    cases = "".join(
        f"  - {{name: {name}, output: '1', expected: 1, {stuck if 'stuck' in name else numeric}}}\n"
        for name in names
    )
    write("suite.yaml", f"name: two\nsandbox: none\ncases:\n{cases}")
    args = ("--jobs", "2", "-o", "r.json", "--resume", "r.jsonl")
    process = start(tmp_path, "suite.yaml", *args, tmp=tmp_path / "tmp")
    with killed_at_the_end(tmp_path / "no-pids", process):
        _, err = process.communicate(timeout=BOUND + 60)
    assert process.returncode == 1, err
    assert err.count("the case is reported timed out, and the run goes on") == 2, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is True
    assert [case["name"] for case in report["cases"]] == names
    errored = [case["name"] for case in report["cases"] if case["errored"]]
    assert errored == ["stuck-a", "stuck-b"]
    for case in report["cases"]:
        if case["errored"]:
            # The stuck grade's timeout alone: the case's other grade went with the process.
            (turn,) = case["turns"]
            (result,) = turn["results"]
            assert result["error"] == "TimeoutError: grader 'stuck' exceeded 1s"
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["name"] for line in lines) == sorted(names)
    assert os.listdir(tmp_path / "tmp") == []
