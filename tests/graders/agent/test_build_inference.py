"""`build` without `command` or `language`: the toolchain is told by the workspace's files."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import gradekit
from gradekit import Sample

Workspace = Callable[[Mapping[str, str]], Path]
MAKEFILE = "app: main.c\n\tcc -o app main.c\n"
PYPROJECT = '[project]\nname = "demo"\nversion = "0.1"\n'


def build(root: Path, **config: Any) -> gradekit.GradeResult:
    return gradekit.create("build", config=config).grade(Sample(workspace=str(root)))


def picked(result: gradekit.GradeResult) -> tuple[str, str]:
    assert result.details is not None, result.error
    return result.details["language"], result.details["detected_from"]


@pytest.mark.skipif(not (shutil.which("make") and shutil.which("cc")), reason="needs make, cc")
def test_a_makefile_project(workspace: Workspace) -> None:
    good = build(workspace({"Makefile": MAKEFILE, "main.c": "int main(void) { return 0; }\n"}))
    assert (good.outcome, picked(good)) == ("pass", ("c", "Makefile"))
    bad = build(workspace({"Makefile": MAKEFILE, "main.c": "int main(void) { return x; }\n"}))
    assert (bad.outcome, picked(bad)) == ("fail", ("c", "Makefile"))
    assert bad.details is not None and "main.c" in bad.details["stderr"]


def test_a_python_project(workspace: Workspace) -> None:
    good = build(workspace({"pyproject.toml": PYPROJECT, "demo/__init__.py": "X = 1\n"}))
    assert (good.outcome, picked(good)) == ("pass", ("python", "pyproject.toml"))
    old_style = build(workspace({"setup.py": "from setuptools import setup\nsetup()\n"}))
    assert (old_style.outcome, picked(old_style)) == ("pass", ("python", "setup.py"))
    bad = build(workspace({"pyproject.toml": PYPROJECT, "demo/core.py": "def f(:\n"}))
    assert (bad.outcome, picked(bad)) == ("fail", ("python", "pyproject.toml"))
    assert bad.details is not None and "SyntaxError" in bad.details["stdout"]


def test_a_language_manifest_wins_over_a_makefile(workspace: Workspace) -> None:
    # Python projects often carry a Makefile of chores; its default target is not the build.
    root = workspace({"pyproject.toml": PYPROJECT, "Makefile": "all:\n\texit 1\n", "a.py": "x=1\n"})
    result = build(root)
    assert (result.outcome, picked(result)) == ("pass", ("python", "pyproject.toml"))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_project(workspace: Workspace) -> None:
    manifest = '{"name": "demo", "version": "1.0.0"}\n'
    good = build(workspace({"package.json": manifest, "index.js": "const x = 1;\n"}))
    assert (good.outcome, picked(good)) == ("pass", ("javascript", "package.json"))
    bad = build(workspace({"package.json": manifest, "index.js": "const x = (;\n"}))
    assert (bad.outcome, picked(bad)) == ("fail", ("javascript", "package.json"))


@pytest.mark.skipif(shutil.which("go") is not None, reason="go is installed: see the next test")
def test_a_go_module_without_go_is_an_error_naming_it(workspace: Workspace) -> None:
    root = workspace({"go.mod": "module demo\n\ngo 1.21\n", "main.go": "package main\n"})
    result = build(root)
    assert result.outcome == "error"
    assert result.error == (
        "CommandError: command 'go' not found on PATH; install it or give its full path"
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_a_go_module(workspace: Workspace) -> None:
    root = workspace(
        {"go.mod": "module demo\n\ngo 1.21\n", "main.go": "package main\nfunc main() {}\n"}
    )
    result = build(root, timeout=120)
    assert (result.outcome, picked(result)) == ("pass", ("go", "go.mod"))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_a_cargo_project(workspace: Workspace) -> None:
    manifest = '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'
    root = workspace({"Cargo.toml": manifest, "src/main.rs": "fn main() {}\n"})
    result = build(root, timeout=120)
    assert (result.outcome, picked(result)) == ("pass", ("rust", "Cargo.toml"))


def test_the_samples_language_wins_and_nothing_to_tell_is_an_error(workspace: Workspace) -> None:
    root = workspace({"pyproject.toml": PYPROJECT, "a.py": "x = 1\n"})
    grader = gradekit.create("build")
    told = grader.grade(Sample(workspace=str(root), metadata={"language": "c"}))
    assert told.message == "no Makefile and no CMakeLists.txt"  # the sample said C
    assert told.details is not None and "detected_from" not in told.details
    nothing = build(workspace({"notes.txt": "hello"}))
    assert nothing.outcome == "error"
    assert nothing.error == (
        "ValueError: no build command: set `command` or `language` on the grader, or give the "
        "sample a `language`; the workspace has none of Cargo.toml, go.mod, tsconfig.json, "
        "package.json, pyproject.toml, setup.py, setup.cfg, pom.xml, Makefile, makefile, "
        "GNUmakefile, CMakeLists.txt to tell its toolchain"
    )
