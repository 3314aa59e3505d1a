"""Linter presets for the `lint` kind: the command of each tool and how to read its findings.

Each preset asks its tool for machine-readable output where the tool offers it (ruff, pylint,
mypy and eslint print JSON); flake8 and black are read from their plain text lines.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit.process.bubblewrap import NO_MOUNTS, Mounts

__all__ = ["PRESETS", "Finding", "Linter", "Parser"]

Finding = dict[str, Any]
"""One finding: `path`, `line`, `column`, `code`, `message` (absent fields are None)."""

Parser = Callable[[str, str, Path], "list[Finding] | None"]
"""`parse(stdout, stderr, cwd)` -> findings, or None when the output cannot be read."""


def _finding(cwd: Path, path: Any, line: Any, column: Any, code: Any, message: Any) -> Finding:  # noqa: PLR0917
    if isinstance(path, str) and os.path.isabs(path):
        path = os.path.relpath(path, cwd)
    return {"path": path, "line": line, "column": column, "code": code, "message": message}


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _ruff(stdout: str, stderr: str, cwd: Path) -> list[Finding] | None:
    data = _json(stdout)
    if not isinstance(data, list):
        return None
    return [
        _finding(
            cwd,
            item.get("filename"),
            (item.get("location") or {}).get("row"),
            (item.get("location") or {}).get("column"),
            item.get("code"),
            item.get("message"),
        )
        for item in data
        if isinstance(item, dict)
    ]


def _pylint(stdout: str, stderr: str, cwd: Path) -> list[Finding] | None:
    data = _json(stdout)
    if not isinstance(data, list):
        return None
    return [
        _finding(
            cwd,
            item.get("path"),
            item.get("line"),
            item.get("column"),
            item.get("message-id") or item.get("symbol"),
            item.get("message"),
        )
        for item in data
        if isinstance(item, dict)
    ]


_MYPY_TEXT: Final = re.compile(r"^(.+?):(\d+):(?:(\d+):)? (error|note): (.*?)(?:  \[([\w-]+)\])?$")


def _mypy(stdout: str, stderr: str, cwd: Path) -> list[Finding] | None:
    findings = []
    for line in stdout.splitlines():
        item = _json(line) if line.startswith("{") else None
        if isinstance(item, dict):
            if item.get("severity") == "error":
                findings.append(
                    _finding(
                        cwd,
                        item.get("file"),
                        item.get("line"),
                        item.get("column"),
                        item.get("code"),
                        item.get("message"),
                    )
                )
            continue
        match = _MYPY_TEXT.match(line)
        if match and match.group(4) == "error":
            path, row, column, _, message, code = match.groups()
            findings.append(_finding(cwd, path, int(row), column and int(column), code, message))
    return findings


_FLAKE8: Final = re.compile(r"^(.+?):(\d+):(\d+): (\S+) (.*)$")


def _flake8(stdout: str, stderr: str, cwd: Path) -> list[Finding] | None:
    findings = []
    for line in stdout.splitlines():
        match = _FLAKE8.match(line)
        if match:
            path, row, column, code, message = match.groups()
            findings.append(_finding(cwd, path, int(row), int(column), code, message))
    return findings


def _black(stdout: str, stderr: str, cwd: Path) -> list[Finding] | None:
    prefix = "would reformat "
    return [
        _finding(cwd, line[len(prefix) :], None, None, None, "would reformat")
        for line in stderr.splitlines()
        if line.startswith(prefix)
    ]


def _eslint(stdout: str, stderr: str, cwd: Path) -> list[Finding] | None:
    data = _json(stdout)
    if not isinstance(data, list):
        return None
    return [
        _finding(
            cwd,
            entry.get("filePath"),
            message.get("line"),
            message.get("column"),
            message.get("ruleId"),
            message.get("message"),
        )
        for entry in data
        if isinstance(entry, dict)
        for message in entry.get("messages") or ()
        if isinstance(message, dict)
    ]


@attrs.frozen
class Linter:
    """A linter to run: its name in results, its command, how to read its output, the
    folders to look for its executable in after PATH (relative ones: inside the workspace),
    and what it needs mounted in bubblewrap (mypy: its shared cache)."""

    name: str
    command: tuple[str, ...]
    parse: Parser | None = None
    search: tuple[str, ...] = ()
    mounts: Mounts = NO_MOUNTS


_VENV_BIN: Final = os.path.dirname(sys.executable)  # tools installed beside gradekit
# mypy spends seconds on the standard library when its cache is cold; one cache shared by all
# runs (outside every workspace) brings that down to about one second.
_MYPY_CACHE: Final = os.path.join(tempfile.gettempdir(), f"gradekit-mypy-cache-{os.getuid()}")

PRESETS: Final = {
    "ruff": Linter(
        "ruff",
        ("ruff", "check", "--output-format", "json", "--no-cache", "."),
        _ruff,
        (_VENV_BIN,),
    ),
    "pylint": Linter(
        "pylint", ("pylint", "--output-format=json", "--recursive=y", "."), _pylint, (_VENV_BIN,)
    ),
    "mypy": Linter(
        "mypy",
        ("mypy", "-O", "json", "--cache-dir", _MYPY_CACHE, "."),
        _mypy,
        (_VENV_BIN,),
        Mounts(writable=(_MYPY_CACHE,)),
    ),
    "black": Linter("black", ("black", "--check", "."), _black, (_VENV_BIN,)),
    "flake8": Linter("flake8", ("flake8", "."), _flake8, (_VENV_BIN,)),
    "eslint": Linter(
        "eslint", ("eslint", "--format", "json", "."), _eslint, ("node_modules/.bin",)
    ),
}
