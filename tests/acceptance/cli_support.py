"""Helpers the acceptance tests import by name (a unique module name: `conftest` is ambiguous
when several test folders are collected in one run)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"


def gradekit_command() -> str:
    """The console script installed beside this interpreter, else the one on PATH."""
    beside = Path(sys.executable).parent / "gradekit"
    if beside.exists():
        return str(beside)
    found = shutil.which("gradekit")
    if found is None:
        pytest.fail("the gradekit command is not installed: pip install -e '.[test]'")
    return found


Run = Callable[..., subprocess.CompletedProcess[str]]
