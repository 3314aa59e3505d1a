"""The README that `gradekit new-pack` writes installs the pack on a fresh machine as printed:
its install lines, with /path/to/gradekit replaced by a checkout of gradekit as the README
says, run in a new venv with no gradekit on the package index, and the pack's tests pass."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "/path/to/gradekit"


def fresh_checkout(dest: Path) -> Path:
    """What a clone holds to install gradekit: its metadata and its sources."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "src", dest / "src", ignore=shutil.ignore_patterns("*.egg-info"))
    return dest


def develop_commands(readme: str) -> str:
    """The sh block under the README's "## Develop" heading."""
    develop = readme.split("## Develop", 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", develop, re.S)[:1]
    return str(block)


@pytest.mark.slow
def test_the_scaffold_readme_installs_the_pack_in_a_fresh_venv(tmp_path: Path) -> None:
    checkout = fresh_checkout(tmp_path / "gradekit")
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env.pop("HYPOTHESIS_PROFILE", None)
    made = subprocess.run(
        [sys.executable, "-m", "gradekit", "new-pack", "acme", "--dest", str(tmp_path)],
        env=dict(env, PYTHONPATH=str(ROOT / "src")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert f"pip install -e '{PLACEHOLDER}[testing]'" in made.stdout
    folder = tmp_path / "gradekit-acme"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert f"replace {PLACEHOLDER} with that checkout's path" in readme
    commands = develop_commands(readme).replace(PLACEHOLDER, str(checkout))
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", commands],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    # The venv's gradekit is the checkout's, and the pack's tests ran and passed.
    assert re.search(r" \d+ passed, \d+ skipped in ", done.stdout), done.stdout[-4000:]
    assert " failed" not in done.stdout
    assert "gradekit-acme 0.1.0: every kind keeps the contract" in done.stdout
    assert re.search(r"\nacme\.word_count +gradekit-acme +0\.1\.0 ", done.stdout)
    located = subprocess.run(
        [
            str(folder / ".venv" / "bin" / "python"),
            "-c",
            "import gradekit; print(gradekit.__file__)",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert located.stdout.strip() == str(checkout / "src" / "gradekit" / "__init__.py")
