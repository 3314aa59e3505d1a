"""`gradekit new-pack NAME`: the pack it writes installs, registers its kind, and passes its
own tests and `gradekit check-pack` as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pack_support import pip_install_target


def gradekit(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).parent / "gradekit"
    return subprocess.run(
        [str(command), *args],
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,  # type: ignore[call-overload]
    )


def test_the_written_pack_installs_and_passes_its_own_tests(tmp_path: Path) -> None:
    done = gradekit("new-pack", "acme_demo", "--dest", str(tmp_path))
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "gradekit-acme-demo"
    assert done.stdout.splitlines()[0] == f"wrote {folder} (kind acme_demo.word_count); next:"
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == [
        "README.md",
        "pyproject.toml",
        "src/gradekit_acme_demo/__init__.py",
        "src/gradekit_acme_demo/word_count.py",
        "tests/test_contract.py",
        "tests/test_word_count.py",
    ]
    site = tmp_path / "site"
    pip_install_target(site, folder)
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("HYPOTHESIS_PROFILE", None)
    kinds = gradekit("kinds", "--json", env=env)
    assert '"kind": "acme_demo.word_count"' in kinds.stdout
    assert '"distribution": "gradekit-acme-demo"' in kinds.stdout
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    # 2 behaviour tests; the contract: 2 rules about the kind, 10 per example config (2),
    # of which agrade_agrees and blocking_agrees do not apply (no agrade, no grade_blocking).
    assert tests.stdout.splitlines()[-1].startswith("20 passed, 4 skipped in ")
    checked = gradekit("check-pack", "gradekit-acme-demo", env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert (
        checked.stdout.splitlines()[-1] == "gradekit-acme-demo 0.1.0: every kind keeps the contract"
    )


@pytest.mark.parametrize("name", ["Acme-Graders", "acme_"])  # acme_: gradekit-acme- won't install
def test_a_name_that_is_not_a_namespace_exits_2(tmp_path: Path, name: str) -> None:
    done = gradekit("new-pack", name, "--dest", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == (
        f"gradekit: invalid pack name '{name}': a pack name is its kinds' namespace, "
        "lowercase letters, digits and underscores, starting with a letter and not ending "
        "with an underscore (such as 'acme')\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "gradekit-acme").mkdir()
    (tmp_path / "gradekit-acme" / "mine.txt").write_text("keep")
    done = gradekit("new-pack", "acme", "--dest", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == (
        f"gradekit: {tmp_path / 'gradekit-acme'} exists already; remove it or choose another "
        "--dest\n"
    )
    assert [p.name for p in (tmp_path / "gradekit-acme").iterdir()] == ["mine.txt"]
