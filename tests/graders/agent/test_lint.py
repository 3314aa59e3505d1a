"""The `lint` kind: real ruff and mypy runs on clean and dirty code."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import gradekit
from gradekit import ConfigError, Sample
from gradekit.registry.entries import build_entry

Workspace = Callable[[Mapping[str, str]], Path]

CLEAN = {"app.py": "def double(x: int) -> int:\n    return x * 2\n"}
DIRTY = {"app.py": 'import os\n\n\ndef double(x: int) -> int:\n    return "x" * 2\n'}


def lint(root: Path, **config: Any) -> gradekit.GradeResult:
    return gradekit.create("lint", config=config).grade(Sample(workspace=str(root)))


def linters(result: gradekit.GradeResult) -> dict[str, dict[str, Any]]:
    assert result.details is not None
    return {item["name"]: item for item in result.details["linters"]}


def test_ruff_passes_clean_code_and_reports_findings_on_dirty(workspace: Workspace) -> None:
    clean = lint(workspace(CLEAN), linters=["ruff"])
    assert (clean.outcome, clean.score, clean.message) == ("pass", 1.0, "1/1 linters passed")
    assert linters(clean)["ruff"]["findings"] == 0
    dirty = lint(workspace(DIRTY), linters=["ruff"])
    assert (dirty.outcome, dirty.score) == ("fail", 0.0)
    assert dirty.message == "0/1 linters passed (failed: ruff)"
    report = linters(dirty)["ruff"]
    assert report["exit_code"] == 1
    unused = [f for f in report["first"] if f["code"] == "F401"]
    assert unused == [
        {
            "path": "app.py",
            "line": 1,
            "column": 8,
            "code": "F401",
            "message": "`os` imported but unused",
        }
    ]


def test_mypy_clean_and_dirty(workspace: Workspace) -> None:
    clean = lint(workspace(CLEAN), linters=["mypy"])
    assert clean.outcome == "pass", clean.details
    dirty = lint(workspace(DIRTY), linters=["mypy"])
    assert dirty.outcome == "fail"
    report = linters(dirty)["mypy"]
    assert report["findings"] == 1
    (finding,) = report["first"]
    assert (finding["path"], finding["line"], finding["code"]) == ("app.py", 5, "return-value")
    assert finding["message"] == 'Incompatible return value type (got "str", expected "int")'


def test_score_is_linters_passing_over_linters_run_with_threshold(workspace: Workspace) -> None:
    # ruff only sees the unused import; the custom linter passes; mypy would see the type error.
    root = workspace({"app.py": "import os\n\n\ndef f() -> int:\n    return 1\n"})
    config = {"linters": ["ruff", {"name": "true", "command": [sys.executable, "-c", "pass"]}]}
    strict = lint(root, **config)
    assert (strict.outcome, strict.score) == ("fail", 0.5)
    lenient = lint(root, **config, threshold=0.5)
    assert (lenient.outcome, lenient.score) == ("pass", 0.5)
    entry = build_entry({"kind": "lint", **config, "threshold": 0.5})
    assert entry is not None and entry.threshold is None
    assert entry.grader.grade(Sample(workspace=str(root))).outcome == "pass"


def test_custom_linter_without_parser_keeps_its_output(workspace: Workspace) -> None:
    root = workspace({"notes.py": "# TODO: finish\n"})
    custom = {"name": "no-todo", "command": "sh -c '! grep -rn TODO .'"}
    result = lint(root, linters=[custom])
    assert result.outcome == "fail"
    report = linters(result)["no-todo"]
    assert report["findings"] is None
    assert report["output"] == "./notes.py:1:# TODO: finish\n"


def test_linter_not_installed_is_an_error_naming_it(workspace: Workspace) -> None:
    root = workspace(CLEAN)
    result = lint(root, linters=["ruff", {"name": "acme-lint", "command": "acme-lint-xyz ."}])
    assert result.outcome == "error"
    assert result.error == (
        "CommandError: linter 'acme-lint' is not installed (command 'acme-lint-xyz' not "
        "found on PATH); install it or remove it from linters"
    )


@pytest.mark.skipif(shutil.which("eslint") is not None, reason="eslint is installed here")
def test_missing_preset_is_an_error_naming_it(workspace: Workspace) -> None:
    result = lint(workspace({"a.js": "x\n"}), linters=["eslint"])
    assert result.error == (
        "CommandError: linter 'eslint' is not installed (command 'eslint' not found on PATH); "
        "install it or remove it from linters"
    )


def test_lint_never_writes_into_the_workspace(workspace: Workspace) -> None:
    root = workspace(DIRTY)
    lint(root, linters=["ruff"], copy_workspace=False)
    assert sorted(p.name for p in root.iterdir()) == ["app.py"]


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({}, "$.linters: expected a non-empty list of linters, got None; e.g. [ruff, mypy]"),
        (
            {"linters": []},
            "$.linters: expected a non-empty list of linters, got []; e.g. [ruff, mypy]",
        ),
        (
            {"linters": ["ruf"]},
            "$.linters[0]: unknown linter 'ruf'; did you mean 'ruff'? (or give {name, command})",
        ),
        ({"linters": [{"name": "x"}]}, "$.linters[0].command: each custom linter needs a command"),
        ({"linters": [{"command": "x"}]}, "$.linters[0].name: each custom linter needs a name"),
        ({"linters": ["ruff"], "threshold": 1.5}, "$.threshold: must be between 0 and 1, got 1.5"),
    ],
)
def test_bad_options_name_the_key(config: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        gradekit.create("lint", config=config)
    assert [str(p) for p in caught.value.problems] == [problem]


def test_defaults() -> None:
    grader = gradekit.create("lint", config={"linters": ["ruff"]})
    assert (grader.threshold, grader.timeout) == (1.0, 120.0)  # type: ignore[attr-defined]
