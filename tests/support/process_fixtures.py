"""Fixtures of the tests of running code elsewhere (tests/process) and of the agent kinds
(tests/graders/agent): workspaces written as real files, process checks. Each folder's
conftest imports them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from liveness import gone_within


@pytest.fixture
def gone() -> Callable[..., bool]:
    """`gone(pid, within=2.0)`: True once `pid` has ended (a zombie, dead but not yet reaped,
    counts as ended), waiting at most `within` seconds for a kill already sent to land."""

    def gone(pid: int, within: float = 2.0) -> bool:
        return not gone_within([pid], within)

    return gone


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
