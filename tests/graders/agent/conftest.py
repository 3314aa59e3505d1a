"""Helpers for the agent-grader tests: workspaces written as real files, process checks."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "Z" not in state.split()[1]


def _gone(pid: int, within: float = 2.0) -> bool:
    # SIGKILL is queued by kill() and acted on when the process next runs: on a busy machine
    # a killed process may still show as running for a moment.
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def gone() -> Callable[..., bool]:
    """`gone(pid, within=2.0)`: True once `pid` has ended (a zombie, dead but not yet reaped,
    counts as ended), waiting at most `within` seconds for a kill already sent to land."""
    return _gone


@pytest.fixture
def workspace(tmp_path: Path) -> Callable[[Mapping[str, str]], Path]:
    """Write `{relative path: text}` into a fresh folder and return it."""

    def make(files: Mapping[str, str]) -> Path:
        root = tmp_path / f"ws{len(list(tmp_path.iterdir()))}"
        root.mkdir()
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return root

    return make
