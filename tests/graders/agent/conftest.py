"""Helpers for the agent-grader tests: workspaces written as real files, process checks."""

from __future__ import annotations

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


@pytest.fixture
def alive() -> Callable[[int], bool]:
    """`alive(pid)`: True while `pid` runs; a zombie (dead, not yet reaped) counts as gone."""
    return _alive


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
