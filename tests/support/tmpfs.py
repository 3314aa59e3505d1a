"""A small tmpfs mounted for one test: a disk that fills up for real (needs root)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """`folder` (made here) with a tmpfs of `size` (`64k`, `64m`) mounted on it, unmounted
    after; the test is skipped where no tmpfs can be mounted."""
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"a small tmpfs cannot be mounted here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
