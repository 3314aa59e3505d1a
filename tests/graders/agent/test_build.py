"""The `build` kind: real projects that build or fail to compile."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import gradekit
from gradekit import ConfigError, Sample

Workspace = Callable[[Mapping[str, str]], Path]

needs = {tool: shutil.which(tool) is None for tool in ("node", "cc", "make", "cmake", "cargo")}


def build(root: Path | None, metadata: Mapping[str, Any] | None = None, **config: Any) -> Any:
    grader = gradekit.create("build", config=config)
    return grader.grade(Sample(workspace=None if root is None else str(root), metadata=metadata))


def test_python_project_that_compiles(workspace: Workspace) -> None:
    root = workspace(
        {
            "pkg/__init__.py": "",
            "pkg/core.py": "def area(r: float) -> float:\n    return 3.14159 * r * r\n",
            ".venv/lib/broken.py": "this is not python (\n",  # venvs are skipped
        }
    )
    result = build(root, language="python")
    assert result.outcome == "pass"
    assert result.message == "built"
    assert result.details["exit_code"] == 0
    assert not (root / "pkg" / "__pycache__").exists()  # the copy was compiled, not the agent's


def test_python_project_that_fails_to_compile(workspace: Workspace) -> None:
    root = workspace({"ok.py": "x = 1\n", "broken.py": "def f(:\n    pass\n"})
    result = build(root, language="python")
    assert result.outcome == "fail"
    assert result.message == "build failed with exit code 1"
    assert result.details["exit_code"] == 1
    assert "SyntaxError" in result.details["stdout"]
    assert "broken.py" in result.details["stdout"]
    assert result.details["checks"] == [
        {"name": "build", "passed": False, "message": "build failed with exit code 1"}
    ]


def test_in_place_python_build_leaves_no_pycache(workspace: Workspace) -> None:
    root = workspace({"a.py": "x = 1\n"})
    assert build(root, language="python", copy_workspace=False).outcome == "pass"
    assert sorted(p.name for p in root.iterdir()) == ["a.py"]


def test_language_comes_from_the_sample_metadata(workspace: Workspace) -> None:
    root = workspace({"broken.py": "def f(:\n"})
    assert build(root, {"language": "python"}).outcome == "fail"
    unknown = build(root, {"language": "cobol"})
    assert unknown.outcome == "error"
    assert unknown.error == (
        "ValueError: no build preset for language 'cobol'; use one of python, javascript, "
        "typescript, go, rust, java, c, cpp or set `command`"
    )
    nothing = build(root)  # and no file tells the toolchain: see test_build_inference.py
    assert nothing.error is not None
    assert nothing.error.startswith(
        "ValueError: no build command: set `command` or `language` on the grader, "
        "or give the sample a `language`; the workspace has none of"
    )


def test_recorded_build_outcome_is_graded_without_running(workspace: Workspace) -> None:
    ok = build(None, {"build_status": "success", "build_output": "Compiled 3 files"})
    assert (ok.outcome, ok.message) == ("pass", "recorded build: success")
    failed = build(None, {"build_status": "failed", "build_output": "error[E0308]: mismatched"})
    assert (failed.outcome, failed.message) == ("fail", "recorded build: failed")
    assert failed.details["stderr"] == "error[E0308]: mismatched"
    assert failed.details["recorded"] is True
    odd = build(None, {"build_status": "maybe"})
    assert odd.error == (
        "ValueError: recorded build_status must be 'success', 'failed' or 'skipped', "
        "got 'maybe'; fix the sample"
    )
    # A recorded outcome wins even over a command that would fail.
    assert build(None, {"build_status": "success"}, command="false").outcome == "pass"


def test_a_recorded_skipped_build_fails_saying_why() -> None:
    # Hyoka records `build_status: skipped` for a build it did not run (issue 34); before,
    # that was an error result.
    skipped = build(None, {"build_status": "skipped"})
    assert skipped.outcome == "fail"
    assert skipped.message == (
        "recorded build: skipped (the harness did not build; a build that did not run does not "
        "pass: remove build_status to have gradekit build the workspace)"
    )
    assert skipped.details["build_status"] == "skipped"
    assert skipped.details["recorded"] is True


def test_custom_command(workspace: Workspace) -> None:
    root = workspace({"a.txt": "x"})
    result = build(root, command="sh -c 'echo building >&2; exit 3'")
    assert result.outcome == "fail"
    assert result.details["exit_code"] == 3
    assert result.details["stderr"] == "building\n"


def test_missing_toolchain_is_an_error_naming_it(workspace: Workspace) -> None:
    root = workspace({"main.go": "package main\nfunc main() {}\n"})
    result = build(root, language="go", env={"PATH": "/nonexistent"})
    assert result.outcome == "error"
    assert result.error == (
        "CommandError: command 'go' not found on PATH; install it or give its full path"
    )


def test_no_workspace_is_an_error() -> None:
    result = build(None, language="python")
    assert result.outcome == "error"
    assert result.error is not None and result.error.startswith(
        "ValueError: the sample has no workspace"
    )


def test_timeout_is_a_fail(workspace: Workspace) -> None:
    root = workspace({"a.txt": "x"})
    result = build(root, command="sleep 30", timeout=0.5)
    assert (result.outcome, result.message) == ("fail", "timed out after 0.5s")
    assert result.details["exit_code"] == -1


def test_unknown_language_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        gradekit.create("build", config={"language": "pyhton"})
    assert [str(p) for p in caught.value.problems] == [
        "$.language: no build preset for 'pyhton'; did you mean 'python'?"
    ]
    assert gradekit.create("build", config={"language": "TS"}).language == "TS"
    assert gradekit.create("build").timeout == 300.0


@pytest.mark.skipif(needs["node"], reason="node is not installed")
def test_javascript_checks_every_file_outside_node_modules(workspace: Workspace) -> None:
    good = {"src/a.js": "const x = 1;\n", "node_modules/dep/bad.js": "this is ( not js\n"}
    assert build(workspace(good), language="javascript").outcome == "pass"
    bad = {**good, "src/b.mjs": "export const y = (;\n", "src/c.js": "let z = [;\n"}
    result = build(workspace(bad), language="js")
    assert result.outcome == "fail"
    assert result.details["commands"] == 3
    assert [cmd.split()[-1] for cmd in result.details["failed_commands"]] == [
        "src/b.mjs",
        "src/c.js",
    ]
    assert "SyntaxError" in result.details["stderr"]
    assert build(workspace({"a.txt": "x"}), language="js").message == (
        "no JavaScript files (.js, .mjs, .cjs) to check"
    )


@pytest.mark.skipif(needs["cc"] or needs["make"], reason="cc or make is not installed")
def test_c_with_a_makefile(workspace: Workspace) -> None:
    makefile = "app: main.c\n\tcc -o app main.c\n"
    good = workspace({"Makefile": makefile, "main.c": "int main(void) { return 0; }\n"})
    assert build(good, language="c").outcome == "pass"
    assert not (good / "app").exists()
    bad = workspace({"Makefile": makefile, "main.c": "int main(void) { return x; }\n"})
    result = build(bad, language="c")
    assert result.outcome == "fail"
    assert "main.c" in result.details["stderr"]
    empty = build(workspace({"main.c": "int main(void) { return 0; }\n"}), language="cpp")
    assert empty.message == "no Makefile and no CMakeLists.txt"


@pytest.mark.slow
@pytest.mark.skipif(needs["cmake"] or needs["cc"], reason="cmake or cc is not installed")
def test_c_with_cmake(workspace: Workspace) -> None:
    cmake = "cmake_minimum_required(VERSION 3.10)\nproject(demo C)\nadd_executable(demo main.c)\n"
    good = workspace({"CMakeLists.txt": cmake, "main.c": "int main(void) { return 0; }\n"})
    assert build(good, language="c").outcome == "pass"
    bad = workspace({"CMakeLists.txt": cmake, "main.c": "int main(void) { return x; }\n"})
    assert build(bad, language="c").outcome == "fail"


@pytest.mark.slow
@pytest.mark.skipif(needs["cargo"], reason="cargo is not installed")
def test_rust_with_cargo(workspace: Workspace) -> None:
    manifest = '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'
    good = workspace({"Cargo.toml": manifest, "src/main.rs": "fn main() {}\n"})
    assert build(good, language="rust", timeout=120).outcome == "pass"
    bad = workspace({"Cargo.toml": manifest, "src/main.rs": 'fn main() { let x: i32 = "a"; }\n'})
    result = build(bad, language="rust", timeout=120)
    assert result.outcome == "fail"
    assert "mismatched types" in result.details["stderr"]
