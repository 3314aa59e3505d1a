"""Helpers the kit's tests import by name (a unique module name: `conftest` is ambiguous when
several test folders are collected in one run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKS = Path(__file__).resolve().parent / "packs"


def pip_install_target(target: Path, *projects: Path) -> None:
    """Install `projects` into `target` with pip, offline and without their dependencies
    (gradekit, attrs and the rest come from this environment)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--target",
            str(target),
            *map(str, projects),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
