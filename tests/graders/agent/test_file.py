"""The `file` kind on real folders: globs, hidden folders, symlinks, contents."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import gradekit
from gradekit import ConfigError, Sample

Workspace = Callable[[Mapping[str, str]], Path]

PROJECT = {
    "README.md": "# demo\n",
    "src/app.py": "def main():\n    return 42\n",
    "src/util/helpers.py": "VALUE = 1\n",
    "tests/test_app.py": "from app import main\n\ndef test_main():\n    assert main() == 42\n",
    ".git/config": "[core]\n",
    "src/__pycache__/app.cpython-311.pyc": "bytes",
    "node_modules/left-pad/index.js": "module.exports = 1\n",
    ".venv/bin/activate": "echo\n",
}


def grade(root: Path | None, **config: Any) -> gradekit.GradeResult:
    grader = gradekit.create("file", config=config)
    return grader.grade(Sample(workspace=None if root is None else str(root)))


def checks(result: gradekit.GradeResult) -> dict[str, tuple[bool, str]]:
    assert result.details is not None
    return {c["name"]: (c["passed"], c["message"]) for c in result.details["checks"]}


def test_required_and_forbidden_globs(workspace: Workspace) -> None:
    root = workspace(PROJECT)
    result = grade(
        root,
        required_files=["README.md", "src/**/*.py", "tests/test_*.py"],
        forbidden_files=["*.log", "**/secrets.*"],
    )
    assert result.outcome == "pass"
    assert checks(result) == {
        "required README.md": (True, "found README.md"),
        "required src/**/*.py": (True, "found src/app.py, src/util/helpers.py"),
        "required tests/test_*.py": (True, "found tests/test_app.py"),
        "forbidden *.log": (True, "no file matches"),
        "forbidden **/secrets.*": (True, "no file matches"),
    }


def test_each_glob_is_its_own_check(workspace: Workspace) -> None:
    root = workspace({**PROJECT, "debug.log": "x"})
    result = grade(root, required_files=["docs/*.md", "README.md"], forbidden_files=["*.log"])
    assert result.outcome == "fail"
    assert result.score == pytest.approx(1 / 3)
    assert checks(result)["required docs/*.md"] == (False, "no file matches")
    assert checks(result)["forbidden *.log"] == (False, "found debug.log")


def test_star_stays_in_one_folder_and_double_star_recurses(workspace: Workspace) -> None:
    root = workspace(PROJECT)
    assert grade(root, required_files=["*.py"]).outcome == "fail"
    assert grade(root, required_files=["src/*.py"]).outcome == "pass"
    assert grade(root, required_files=["src/*/helpers.py"]).outcome == "pass"
    assert grade(root, required_files=["**/helpers.py"]).outcome == "pass"
    assert grade(root, required_files=["src/**"]).outcome == "pass"


def test_globs_are_case_sensitive(workspace: Workspace) -> None:
    root = workspace(PROJECT)
    assert grade(root, required_files=["readme.md"]).outcome == "fail"
    assert grade(root, required_files=["README.[mM][dD]"]).outcome == "pass"


def test_hidden_folders_are_not_counted_unless_named(workspace: Workspace) -> None:
    root = workspace(PROJECT)
    result = grade(root, min_files=4, max_files=4)
    assert result.outcome == "pass"
    assert checks(result)["max_files"] == (True, "4 files (at most 4)")
    assert grade(root, required_files=["**/*.js"]).outcome == "fail"
    assert grade(root, required_files=["node_modules/**/*.js"]).outcome == "pass"
    assert grade(root, required_files=["**/config"]).outcome == "fail"
    assert grade(root, required_files=[".git/config"]).outcome == "pass"
    assert grade(root, forbidden_files=["**/*.pyc"]).outcome == "pass"
    assert grade(root, forbidden_files=["**/__pycache__/*.pyc"]).outcome == "fail"
    assert grade(root, required_files=[".venv/bin/*"]).outcome == "pass"


def test_min_and_max_files(workspace: Workspace) -> None:
    root = workspace(PROJECT)
    result = grade(root, min_files=5, max_files=3)
    assert checks(result) == {
        "min_files": (False, "4 files (at least 5)"),
        "max_files": (False, "4 files (at most 3)"),
    }


def test_contains_every_matched_file_must_match(workspace: Workspace) -> None:
    root = workspace(PROJECT)
    result = grade(root, contains={"src/**/*.py": r"^(def|VALUE)", "tests/*.py": "assert"})
    assert result.outcome == "pass"
    result = grade(root, contains={"src/**/*.py": r"^def "})
    assert checks(result)["contains src/**/*.py"] == (
        False,
        "/^def / not found in src/util/helpers.py",
    )
    result = grade(root, contains={"docs/*.md": "x"})
    assert checks(result)["contains docs/*.md"] == (False, "no file matches")


def test_symlink_to_etc_is_never_followed(workspace: Workspace) -> None:
    root = workspace({"notes.txt": "hello\n"})
    os.symlink("/etc/passwd", root / "passwd")
    os.symlink("/etc", root / "etc")
    os.symlink("notes.txt", root / "inside.txt")
    assert grade(root, required_files=["passwd"]).outcome == "fail"
    assert grade(root, required_files=["etc/*"]).outcome == "fail"
    assert grade(root, contains={"*": "root:"}).outcome == "fail"
    result = grade(root, max_files=2, required_files=["inside.txt"])
    assert result.outcome == "pass"
    assert checks(result)["max_files"] == (True, "2 files (at most 2)")


def test_symlink_loop_does_not_hang(workspace: Workspace) -> None:
    root = workspace({"a.txt": "a"})
    os.symlink(".", root / "loop")
    assert grade(root, required_files=["**/a.txt"], max_files=1).outcome == "pass"


@pytest.mark.parametrize(
    ("glob", "problem"),
    [
        ("../outside.txt", "glob '../outside.txt' climbs out of the workspace ('..'); "),
        ("src/../../x", "glob 'src/../../x' climbs out of the workspace ('..'); "),
        ("/etc/passwd", "glob '/etc/passwd' is absolute; globs are relative to the workspace"),
    ],
)
def test_globs_that_leave_the_workspace_are_config_errors(glob: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        gradekit.create("file", config={"required_files": ["ok.txt", glob]})
    (found,) = caught.value.problems
    assert found.path == ("required_files[1]",)
    assert found.message.startswith(problem)
    with pytest.raises(ConfigError):
        gradekit.create("file", config={"contains": {glob: "x"}})


def test_climbing_glob_never_reaches_a_file_outside(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    root = workspace({"a.txt": "a"})
    with pytest.raises(ConfigError):
        grade(root, required_files=["../secret.txt"])
    assert grade(root, required_files=["**/secret.txt"]).outcome == "fail"


def test_no_constraint_and_bad_regex_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="a file grader with no constraint checks nothing"):
        gradekit.create("file", config={})
    with pytest.raises(ConfigError) as caught:
        gradekit.create("file", config={"contains": {"*.py": "(("}})
    assert str(caught.value.problems[0]) == (
        "$.contains.*.py: invalid regular expression: missing ) at position 2"
    )


def test_no_workspace_is_an_error_result(tmp_path: Path) -> None:
    result = grade(None, required_files=["a"])
    assert result.outcome == "error"
    assert result.error == (
        "ValueError: the sample has no workspace; give the case a `workspace` folder "
        "holding the files the agent wrote"
    )
    missing = grade(tmp_path / "nope", required_files=["a"])
    assert missing.error == (
        f"FileNotFoundError: workspace '{tmp_path / 'nope'}' is not a folder; check the path"
    )


def test_threshold(workspace: Workspace) -> None:
    root = workspace(PROJECT)
    config = {"required_files": ["README.md", "src/app.py", "LICENSE"], "threshold": 0.6}
    assert grade(root, **config).outcome == "pass"


_MEMORY_OF_A_GRADE = """
import sys
import gradekit
root = sys.argv[1]
grader = gradekit.create("file", config={"contains": {"*.py": "def main"}})
result = grader.grade(gradekit.Sample(output="", workspace=root))
# VmHWM, this program's own peak: ru_maxrss would carry pytest's over from the fork.
peak_kb = next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1]
print(result.passed, int(peak_kb) // 1024)
print(result.message)
"""


def test_a_huge_file_is_searched_only_up_to_max_file_size(tmp_path: Path) -> None:
    # An agent can leave a sparse file of any size, which costs no disk: read whole, 300 MB
    # of it took 600 MB of memory, and a few GB would take the machine's.
    import subprocess
    import sys

    (tmp_path / "a.py").write_text("def main():\n    pass\n")
    with open(tmp_path / "b.py", "wb") as big:
        big.truncate(300 * 1024 * 1024)
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_OF_A_GRADE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    passed, peak_mb = done.stdout.split("\n")[0].split()
    assert passed == "False"
    assert int(peak_mb) < 150, done.stdout
    assert "/def main/ not found in b.py (only its first 16 MiB searched: raise max_file_size" in (
        done.stdout
    )


def test_max_file_size_takes_a_size(workspace: Workspace) -> None:
    root = workspace({"a.py": "x" * 100 + "def main(): pass\n"})
    assert not grade(root, contains={"*.py": "def main"}, max_file_size=50).passed
    assert grade(root, contains={"*.py": "def main"}, max_file_size="1KiB").passed
    with pytest.raises(ConfigError, match="max_file_size"):
        grade(root, contains={"*.py": "x"}, max_file_size="lots")
