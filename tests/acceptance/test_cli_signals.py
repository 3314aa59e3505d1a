"""SIGTERM and Ctrl-C stop `gradekit run` cleanly: the reports are written and marked incomplete,
the child processes and sandbox folders are gone, the exit code is 128 + the signal, and a
second signal during the shutdown ends the process at once, quietly."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from liveness import gone_within
from processes import killed_at_the_end, lines, pids, start, wait_until

Write = Callable[[str, str], Path]

QUICK = "\n".join(
    f'  - {{name: quick-{i}, output: "{i}", expected: {i}, graders: [{{kind: numeric}}]}}'
    for i in range(4)
)


def _names(path: Path) -> list[str]:
    return [json.loads(line)["name"] for line in path.read_text().splitlines()]


def test_sigterm_writes_incomplete_reports_and_leaves_no_child_nor_folder(
    write: Write, tmp_path: Path
) -> None:
    # `sandbox: none`: the commands report their pids in the host temp folder, which bubblewrap
    # hides (the sandbox's own kill guarantees are tested in tests/graders/agent/).
    pid_file = tmp_path / "pids"
    command = f'["sh", "-c", "echo $$ >> {pid_file}; exec sleep 120"]'
    sleeper = f"graders: [{{kind: program, command: {command}, timeout: 50}}]"
    write(
        "suite.yaml",
        f"name: term\nsandbox: none\ncases:\n{QUICK}\n"
        f"  - {{name: sleeper-1, output: x, {sleeper}}}\n"
        f"  - {{name: sleeper-2, output: x, {sleeper}}}\n",
    )
    tmp = tmp_path / "tmp"
    process = start(tmp_path, "suite.yaml", "-o", "r.json", "--resume", "r.jsonl", tmp=tmp)
    with killed_at_the_end(pid_file, process):
        log = tmp_path / "r.jsonl"
        wait_until(process, lambda: len(pids(pid_file)) == 2 and lines(log) == 4, "the sleeps")
        assert [name for name in os.listdir(tmp) if name.startswith("gradekit-")]  # sandboxes
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 143, err  # 128 + SIGTERM, as shells report it
        assert "Traceback" not in err
        report = json.loads((tmp_path / "r.json").read_text())
        assert (report["complete"], report["passed"]) == (False, False)
        assert [case["name"] for case in report["cases"]] == [f"quick-{i}" for i in range(4)]
        assert sorted(_names(log)) == [f"quick-{i}" for i in range(4)]
        assert gone_within(pids(pid_file), 5) == []  # the sandbox's commands were killed
        assert os.listdir(tmp) == []  # their folders and the scratch files removed


DEAF = """
import os, signal, time

def deaf(ctx):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # multiprocessing's exit cannot end it
    with open({pids!r}, "a") as out:
        out.write(f"{{os.getpid()}}\\n")
    time.sleep(120)
    return True
"""


def test_ctrl_c_with_process_isolation_ends_promptly_without_a_traceback(
    write: Write, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pids"
    write("graders.py", DEAF.format(pids=str(pid_file)))
    deaf = "graders: [{kind: code, grader: 'graders:deaf', isolation: process}]"
    write(
        "suite.yaml",
        f"name: deaf\nsandbox: none\ncases:\n{QUICK}\n"
        f"  - {{name: deaf-1, output: x, {deaf}}}\n  - {{name: deaf-2, output: x, {deaf}}}\n",
    )
    process = start(tmp_path, "suite.yaml", "-o", "r.json", "--jobs", "4", tmp=tmp_path / "tmp")
    with killed_at_the_end(pid_file, process):
        wait_until(process, lambda: len(pids(pid_file)) == 2, "the isolated grades")
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole group
        started = time.monotonic()
        _, err = process.communicate(timeout=30)
        assert time.monotonic() - started < 10
        assert process.returncode == 130
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert err.startswith("writing r.json ...\nwriting r.json ... done in "), err
        summary = err.splitlines()[-1]
        assert summary.startswith("gradekit: deaf: 4 cases: 4 passed") and "(interrupted)" in err
        assert gone_within(pids(pid_file), 5) == []
        report = json.loads((tmp_path / "r.json").read_text())
        assert [case["name"] for case in report["cases"]] == [f"quick-{i}" for i in range(4)]


STUBBORN = """
import asyncio

async def stubborn(ctx):
    while True:  # ignores its cancellation: the run waits for it when stopping
        try:
            await asyncio.sleep(100)
        except asyncio.CancelledError:
            pass
"""


def test_a_second_ctrl_c_during_the_shutdown_exits_at_once_and_quietly(
    write: Write, tmp_path: Path
) -> None:
    write("graders.py", STUBBORN)
    write(
        "suite.yaml",
        f"name: stubborn\nsandbox: none\ncases:\n{QUICK}\n"
        "  - {name: stubborn, output: x, graders: [{kind: code, grader: 'graders:stubborn'}]}\n",
    )
    process = start(tmp_path, "suite.yaml", "--resume", "r.jsonl", tmp=tmp_path / "tmp")
    with killed_at_the_end(tmp_path / "no-pids", process):
        wait_until(process, lambda: lines(tmp_path / "r.jsonl") == 4, "the quick cases")
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)  # the run now waits (5 s at most) for the stubborn grader
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = process.communicate(timeout=30)
        assert time.monotonic() - started < 2
        assert process.returncode == 130
        assert err == "gradekit: stopped at once (second interrupt)\n"
        assert sorted(_names(tmp_path / "r.jsonl")) == [f"quick-{i}" for i in range(4)]


SLEEPY = """
import os, time

def sleepy(ctx):
    with open({pids!r}, "a") as out:
        out.write(f"{{os.getpid()}}\\n")
    time.sleep(120)
    return True
"""


def test_sighup_to_the_whole_group_stops_the_run_like_sigterm(write: Write, tmp_path: Path) -> None:
    # A closed terminal or SSH session sends SIGHUP to the run's whole process group: the
    # process-isolated workers in it included. Python's default for SIGHUP ended the run at
    # once, with no report.
    pid_file = tmp_path / "pids"
    write("graders.py", SLEEPY.format(pids=str(pid_file)))
    sleepy = "graders: [{kind: code, grader: 'graders:sleepy', isolation: process}]"
    write(
        "suite.yaml",
        f"name: hangup\nsandbox: none\ncases:\n{QUICK}\n"
        f"  - {{name: sleepy-1, output: x, {sleepy}}}\n"
        f"  - {{name: sleepy-2, output: x, {sleepy}}}\n",
    )
    process = start(
        tmp_path,
        "suite.yaml",
        "-o",
        "r.json",
        "--junit",
        "r.xml",
        "--resume",
        "r.jsonl",
        "--jobs",
        "4",
        tmp=tmp_path / "tmp",
    )
    with killed_at_the_end(pid_file, process):
        log = tmp_path / "r.jsonl"
        wait_until(process, lambda: len(pids(pid_file)) == 2 and lines(log) == 4, "the sleeps")
        os.killpg(process.pid, signal.SIGHUP)
        started = time.monotonic()
        _, err = process.communicate(timeout=30)
        assert time.monotonic() - started < 10
        assert process.returncode == 129, err  # 128 + SIGHUP
        assert "Traceback" not in err and "Exception ignored" not in err, err
        report = json.loads((tmp_path / "r.json").read_text())
        assert (report["complete"], report["passed"]) == (False, False)
        assert [case["name"] for case in report["cases"]] == [f"quick-{i}" for i in range(4)]
        assert sorted(_names(log)) == [f"quick-{i}" for i in range(4)]
        assert (tmp_path / "r.xml").read_text().count("<testcase ") == 4
        assert gone_within(pids(pid_file), 5) == []
