"""A Dask run whose every worker is gone ends after `--dask-timeout` with a message and exit
code 1, its results log keeping every case that finished: a real scheduler, one real worker
process without a nanny (nothing restarts it), SIGKILLed while it grades."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dask_suites import SLOW_CASES, killing_the_worker_grading, write_slow_suite

distributed = pytest.importorskip("distributed")

GRADEKIT = str(Path(sys.executable).parent / "gradekit")


@pytest.fixture
def lone_worker(tmp_path: Path) -> Iterator[str]:
    """The address of a scheduler with one worker process of its own (no nanny)."""
    with distributed.LocalCluster(
        n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
             "--nthreads", "1", "--no-dashboard"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            with distributed.Client(address) as client:
                client.wait_for_workers(1, timeout=60)
            yield address
        finally:
            worker.kill()
            worker.wait()


def test_losing_every_worker_ends_the_run_after_the_dask_timeout(
    tmp_path: Path, lone_worker: str
) -> None:
    write_slow_suite(tmp_path, f"lost_graders_{os.getpid()}")
    command = [GRADEKIT, "run", "suite.yaml", "--executor", "dask", "--scheduler", lone_worker]
    command += ["--resume", "log.jsonl", "-o", "r.json", "--dask-timeout", "3"]
    started = time.monotonic()
    with killing_the_worker_grading(tmp_path, "slow-17", seconds=120) as killed:
        done = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=90,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert killed, "slow-17 was never graded"
    assert time.monotonic() - started < 60
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "gradekit: no Dask worker has been connected to the scheduler for 3 s (--dask-timeout): "
        "every worker was lost; the results log keeps every finished case: start workers and "
        "run again with --resume"
    ) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    logged: list[Any] = [json.loads(line) for line in (tmp_path / "log.jsonl").open()]
    names = [case["name"] for case in logged]
    assert len(names) == len(set(names)) and 0 < len(names) < SLOW_CASES
    assert "slow-17" not in names


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), float("nan"), True, "5"])
def test_a_worker_timeout_that_is_not_a_positive_number_of_seconds_is_refused(
    seconds: Any,
) -> None:
    from gradekit import DaskExecutor

    with pytest.raises(ValueError, match=r"^worker_timeout must be a number of seconds > 0, got "):
        DaskExecutor(worker_timeout=seconds)


def test_dask_timeout_without_the_dask_executor_is_a_usage_error(tmp_path: Path) -> None:
    write_slow_suite(tmp_path, f"lost_graders_usage_{os.getpid()}")
    done = subprocess.run(
        [GRADEKIT, "run", "suite.yaml", "--dask-timeout", "5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == "gradekit: --dask-timeout needs --executor dask\n"
