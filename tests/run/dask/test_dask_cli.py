"""`gradekit run --executor dask` as a user runs it, against a real two-process LocalCluster:
the same reports as a local run, through `--scheduler`, `GRADEKIT_DASK_SCHEDULER` or a local
cluster of its own, with `--filter` and `--resume`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from dask_suites import (
    GRADEKIT,
    assert_no_case_lost_or_doubled,
    gradekit,
    killing_the_worker_grading,
    write_graders,
    write_mixed_suite,
    write_slow_suite,
)
from timings import without_durations


def report(path: Path) -> Any:
    data = json.loads(path.read_text(encoding="utf-8"))
    return without_durations(data)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_mixed_suite(tmp_path, f"cli_graders_{os.getpid()}_{tmp_path.name}")


@pytest.fixture
def local(suite: Path) -> Any:
    """The local run's exit code, JSON report and summary line."""
    done = gradekit("run", suite.name, "-o", "local.json", cwd=suite.parent)
    assert done.returncode == 1, done.stderr  # the suite has failing cases
    return done.returncode, report(suite.parent / "local.json")


def test_run_on_a_scheduler_writes_the_local_run_s_report(
    cluster: Any, suite: Path, local: Any
) -> None:
    done = gradekit(
        "run", suite.name, "--executor", "dask", "--scheduler", cluster.scheduler_address,
        "-o", "dask.json", cwd=suite.parent,
    )  # fmt: skip
    assert (done.returncode, report(suite.parent / "dask.json")) == local
    assert "306 cases: " in done.stderr


def test_the_scheduler_from_the_environment_with_filter_and_resume(
    cluster: Any, suite: Path, local: Any
) -> None:
    env = {"GRADEKIT_DASK_SCHEDULER": cluster.scheduler_address}
    first = gradekit(
        "run", suite.name, "--executor", "dask", "--filter", "d1*", "--resume", "log.jsonl",
        cwd=suite.parent, env=env,
    )  # fmt: skip
    assert first.returncode == 1, first.stderr
    graded = (suite.parent / "log.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(graded) == 111  # d1, d10-d19, d100-d199

    rest = gradekit(
        "run", suite.name, "--executor", "dask", "--resume", "log.jsonl", "-o", "dask.json",
        cwd=suite.parent, env=env,
    )  # fmt: skip
    assert (rest.returncode, report(suite.parent / "dask.json")) == local
    names = [json.loads(line)["name"] for line in (suite.parent / "log.jsonl").open()]
    assert len(names) == 306 and len(set(names)) == 306  # every case once


def _run_noting_pids(folder: Path, *args: str) -> tuple[int, dict[int, int]]:
    """`gradekit run` with `args` in `folder`: its own pid and the pids that graded the cases
    of the `parity` grader (the marks it leaves), each with its parent's pid."""
    marks = folder / "marks"
    for mark in marks.glob("*"):
        mark.unlink()
    environment = {k: v for k, v in os.environ.items() if k != "GRADEKIT_DASK_SCHEDULER"}
    process = subprocess.Popen(
        [GRADEKIT, "run", *args], cwd=folder, env=environment, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.wait(timeout=180) == 1
    return process.pid, {int(mark.suffix[1:]): int(mark.read_text()) for mark in marks.glob("*")}


def test_without_a_scheduler_a_local_cluster_is_started(suite: Path, local: Any) -> None:
    done = gradekit("run", suite.name, "--executor", "dask", "-o", "dask.json", cwd=suite.parent)
    assert (done.returncode, report(suite.parent / "dask.json")) == local
    # The grades ran in the cluster's worker processes, not in the command's own (as they do
    # in a local run: the command's, or the run it supervises, a `code` grader in a thread
    # being one that may hold the GIL).
    command, graders = _run_noting_pids(suite.parent, suite.name)
    ((grading, parent),) = graders.items()
    assert command in (grading, parent)
    command, graders = _run_noting_pids(suite.parent, suite.name, "--executor", "dask")
    assert graders and command not in graders


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--executor", "dask", "--scheduler", "nowhere://x"],
            "gradekit: cannot reach the Dask scheduler at nowhere://x: ",
        ),
        (["--scheduler", "tcp://127.0.0.1:8786"], "gradekit: --scheduler needs --executor dask"),
        (
            ["--executor", "dask", "--no-cache"],
            "gradekit: --judge-concurrency, --cache-dir and --no-cache set up the judge of this "
            "process and do not reach Dask workers; leave them out with --executor dask\n",
        ),
    ],
)
def test_a_scheduler_that_cannot_be_used_grades_nothing(
    suite: Path, args: list[str], message: str
) -> None:
    done = gradekit("run", suite.name, *args, "--resume", "log.jsonl", cwd=suite.parent)
    assert done.returncode == 2
    assert done.stderr.startswith(message), done.stderr
    if message.endswith("\n"):
        assert done.stderr == message
    assert not (suite.parent / "log.jsonl").exists() or not (suite.parent / "log.jsonl").read_text(
        encoding="utf-8"
    )


def test_ctrl_c_stops_a_dask_run_and_resume_finishes_it_with_every_case_once(
    cluster: Any, tmp_path: Path
) -> None:
    module = f"interrupt_graders_{os.getpid()}"
    write_graders(tmp_path, module)
    cases = "\n".join(f'  - {{name: step-{n}, output: "{n}"}}' for n in range(60))
    (tmp_path / "suite.yaml").write_text(
        f"name: interrupted\ngraders: [{{kind: code, grader: '{module}:slow_parity'}}]\n"
        f"cases:\n{cases}\n",
        encoding="utf-8",
    )
    log = tmp_path / "log.jsonl"
    command = [GRADEKIT, "run", "suite.yaml", "--executor", "dask", "--jobs", "1"]
    command += ["--scheduler", cluster.scheduler_address, "--resume", "log.jsonl"]
    running = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or log.stat().st_size < 10):
        time.sleep(0.05)
    running.send_signal(signal.SIGINT)
    _, stderr = running.communicate(timeout=60)
    assert running.returncode == 130, stderr  # stopped by Ctrl-C
    first = [json.loads(line)["name"] for line in log.open()]
    assert 0 < len(first) < 60 and len(set(first)) == len(first)

    done = gradekit("run", "suite.yaml", "--executor", "dask", "--scheduler",
                    cluster.scheduler_address, "--resume", "log.jsonl", "-o", "r.json",
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    names = [json.loads(line)["name"] for line in log.open()]
    assert sorted(names) == sorted(f"step-{n}" for n in range(60))  # each once
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert (summary["cases"], summary["passed"], summary["failed"]) == (60, 30, 30)


def test_ctrl_c_in_a_terminal_stops_the_local_cluster_quietly(tmp_path: Path) -> None:
    # A terminal's Ctrl-C goes to the whole foreground process group: the command and the
    # worker processes of the local cluster it started.
    module = f"terminal_graders_{os.getpid()}"
    write_graders(tmp_path, module)
    cases = "\n".join(f'  - {{name: step-{n}, output: "{n}"}}' for n in range(80))
    (tmp_path / "suite.yaml").write_text(
        f"name: terminal\ngraders: [{{kind: code, grader: '{module}:slow_parity'}}]\n"
        f"cases:\n{cases}\n",
        encoding="utf-8",
    )
    log = tmp_path / "log.jsonl"
    environment = {k: v for k, v in os.environ.items() if k != "GRADEKIT_DASK_SCHEDULER"}
    command = [GRADEKIT, "run", "suite.yaml", "--executor", "dask", "--jobs", "1"]
    running = subprocess.Popen(
        [*command, "--resume", "log.jsonl"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=environment, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or log.stat().st_size < 10):
        time.sleep(0.05)
    os.killpg(running.pid, signal.SIGINT)
    _, stderr = running.communicate(timeout=60)
    assert running.returncode == 130, stderr  # stopped by Ctrl-C
    assert "Traceback" not in stderr and "(interrupted)" in stderr, stderr
    names = [json.loads(line)["name"] for line in log.open()]
    assert 0 < len(names) < 80 and len(set(names)) == len(names)


def _baseline_section(markdown: str) -> str:
    start = markdown.index("### Compared with the baseline")
    return markdown[start : markdown.index("### ", start + 4)]


def test_a_baseline_marks_and_names_the_cases_as_a_local_run_does(
    cluster: Any, suite: Path, local: Any
) -> None:
    # The baseline: the local run's report with each graded verdict turned over, so cases
    # regress and get fixed all through the suite, which the workers finish in any order.
    data = json.loads((suite.parent / "local.json").read_text(encoding="utf-8"))
    for case in data["cases"]:
        if not case.get("errored"):
            case["passed"] = not case["passed"]
    (suite.parent / "base.json").write_text(json.dumps(data), encoding="utf-8")
    runs = {}
    for where, executor in (("local", ["--jobs", "2"]), ("dask", ["--executor", "dask",
                            "--scheduler", cluster.scheduler_address])):  # fmt: skip
        done = gradekit(
            "run", suite.name, *executor, "--baseline", "base.json", "-o", f"{where}.json",
            "--markdown", f"{where}.md", cwd=suite.parent,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        runs[where] = (
            [line for line in done.stderr.splitlines() if "regressed against" in line],
            done.stdout[done.stdout.index("compared with base.json") :],
            report(suite.parent / f"{where}.json"),
            _baseline_section((suite.parent / f"{where}.md").read_text(encoding="utf-8")),
        )
    assert runs["dask"] == runs["local"]
    (regressed_line,) = runs["local"][0]
    assert " cases regressed against base.json: " in regressed_line
    names = regressed_line.split(": ", 2)[2].rsplit(" and ", 1)[0].split(", ")
    order = [case["name"] for case in data["cases"]]
    assert names == sorted(names, key=order.index)  # in suite order


def test_a_worker_killed_mid_run_loses_no_case_of_the_command_s_reports(
    cluster: Any, tmp_path: Path
) -> None:
    # `gradekit run -o` passes the workers' case texts straight to the report and the log (no
    # case objects): a batch lost with its worker is graded again, and every case is written
    # once, in suite order.
    write_slow_suite(tmp_path, f"cli_kill_graders_{os.getpid()}")
    with killing_the_worker_grading(tmp_path, "slow-17", seconds=120) as killed:
        done = gradekit(
            "run", "suite.yaml", "--executor", "dask", "--scheduler", cluster.scheduler_address,
            "-o", "out.json", "--resume", "log.jsonl", cwd=tmp_path,
        )  # fmt: skip
    data = assert_no_case_lost_or_doubled(tmp_path, killed, done)
    assert data["complete"] is True
