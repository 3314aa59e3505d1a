"""Fixtures for the trace tests: trace files written by real instrumentations (see
`trace_producer.py`), made once per session, and a runner of the `gradekit` command."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[1] / "fixtures" / "judge"


def produce(out: Path, instrumentation: str, *cases: str, ids: str = "hex") -> Path:
    """Run the agent under `instrumentation` once per case, writing OTLP JSON lines to `out`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(FIXTURES), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "ignore",
            str(HERE / "trace_producer.py"),
            f"--{ids}",
            instrumentation,
            str(out),
            *cases,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        pytest.fail(f"the trace producer failed:\n{done.stderr}")
    return out


@pytest.fixture(scope="session")
def traces_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """`traces_of(instrumentation, *cases, ids="hex")`: a trace file, made once per session."""
    made: dict[tuple[str, tuple[str, ...], str], Path] = {}
    folder = tmp_path_factory.mktemp("traces")

    def make(instrumentation: str, *cases: str, ids: str = "hex") -> Path:
        key = (instrumentation, cases, ids)
        if key not in made:
            out = folder / f"{instrumentation}-{'-'.join(cases)}-{ids}.jsonl"
            made[key] = produce(out, instrumentation, *cases, ids=ids)
        return made[key]

    return make


Gradekit = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def gradekit(tmp_path: Path) -> Gradekit:
    """`gradekit(*args)`: `python -m gradekit ARGS` in a child process, in tmp_path."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "FORCE_COLOR")}
        env["COLUMNS"] = "200"
        return subprocess.run(
            [sys.executable, "-m", "gradekit", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            stdin=subprocess.DEVNULL,
        )

    return run
