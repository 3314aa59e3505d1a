"""The `lint` kind: run linters on the workspace; score = linters passing / linters run.

Owns the linter presets too (`PRESETS`): the command of each tool and how to read its
findings. Each preset asks its tool for machine-readable output where the tool offers it (ruff,
pylint, mypy and eslint print JSON); flake8 and black are read from their plain text lines.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

import attrs

from gradekit.core.errors import CommandError, OptionError, SandboxError, did_you_mean
from gradekit.core.types import GradeResult, Sample
from gradekit.graders.patterns import workspace_error
from gradekit.graders.program import SandboxOptions, command_argv, tail, timeout_seconds
from gradekit.graders.results import Check, checks_result, validate_threshold
from gradekit.process.bubblewrap import NO_MOUNTS, Mounts
from gradekit.process.commands import ProcessResult, resolve
from gradekit.process.scratch import Sandbox

__all__ = ["PRESETS", "Finding", "Lint", "Linter", "Parser"]


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


_SHOWN = 10  # findings kept in details per linter


def _linter(item: Any, index: int) -> Linter:
    where = f"linters[{index}]"
    if isinstance(item, str):
        if item in PRESETS:
            return PRESETS[item]
        suffix = did_you_mean(item, PRESETS) or "presets: " + ", ".join(PRESETS)
        raise OptionError(where, f"unknown linter '{item}'; {suffix} (or give {{name, command}})")
    if isinstance(item, Mapping):
        unknown = sorted(set(item) - {"name", "command"})
        if unknown:
            raise OptionError(where, f"unknown key {unknown[0]!r}; a linter takes name, command")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise OptionError(f"{where}.name", "each custom linter needs a name")
        argv = command_argv(item.get("command"), f"{where}.command")
        if argv is None:
            raise OptionError(f"{where}.command", "each custom linter needs a command")
        return Linter(name, argv)
    raise OptionError(where, f"expected a preset name or {{name, command}}, got {item!r}")


def _linters(value: Any) -> tuple[Linter, ...]:
    if not isinstance(value, (list, tuple)) or not value:
        raise OptionError(
            "linters", f"expected a non-empty list of linters, got {value!r}; e.g. [ruff, mypy]"
        )
    return tuple(_linter(item, index) for index, item in enumerate(value))


@attrs.frozen
class Lint(SandboxOptions):
    """Runs each linter on the sample's workspace; a linter passes when it exits 0.

    score = linters passing / linters run; passed when score >= `threshold` (default 1.0:
    every linter). Details keep each linter's finding count and first findings. A linter that
    is not installed gives an error result naming it.
    """

    kind: ClassVar[str] = "lint"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"linters": [{"name": "true", "command": ["true"]}]},
    )

    name: str = attrs.field(kw_only=True, default="lint")
    linters: Any = attrs.field(kw_only=True, default=None, converter=_linters)
    """Linter presets by name, and custom `{name, command}` entries."""
    threshold: float = attrs.field(kw_only=True, default=1.0, validator=validate_threshold)
    timeout: float = attrs.field(kw_only=True, default=120.0, validator=timeout_seconds)

    def _grade(self, sample: Sample, cancel: threading.Event | None) -> GradeResult:
        problem = workspace_error(sample)
        if problem is not None:
            return GradeResult.of_error(self.kind, self.name, problem)
        deadline = time.monotonic() + self.timeout
        try:
            with self.open_sandbox(sample) as box:
                missing = self._missing(box)
                if missing is not None:
                    return GradeResult.of_error(self.kind, self.name, missing)
                runs: list[tuple[Linter, ProcessResult]] = []
                for linter in self._linters():
                    search = tuple(str(box.cwd / folder) for folder in linter.search)
                    result = self.execute(
                        box,
                        linter.command,
                        deadline=deadline,
                        search=search,
                        cancel=cancel,
                        mounts=linter.mounts,
                    )
                    runs.append((linter, result))
                    if result.timed_out:
                        break
                return self._outcome(runs, box)
        except (SandboxError, OSError) as error:  # CommandError is an OSError
            return GradeResult.of_error(self.kind, self.name, error)

    def _linters(self) -> tuple[Linter, ...]:
        linters: tuple[Linter, ...] = self.linters
        return linters

    def _missing(self, box: Sandbox) -> CommandError | None:
        """An error naming the first linter that is not installed, before any runs."""
        env = box.env(self.env)
        for linter in self._linters():
            search = tuple(str(box.cwd / folder) for folder in linter.search)
            try:
                resolve(linter.command[0], env, box.cwd, search)
            except CommandError:
                return CommandError(
                    f"linter '{linter.name}' is not installed (command "
                    f"'{linter.command[0]}' not found on PATH); install it or remove it "
                    "from linters"
                )
        return None

    def _outcome(self, runs: list[tuple[Linter, ProcessResult]], box: Sandbox) -> GradeResult:
        checks, reports = [], []
        for linter, result in runs:
            findings = linter.parse(result.stdout, result.stderr, box.cwd) if linter.parse else None
            passed = result.exit_code == 0 and not result.timed_out
            report: dict[str, Any] = {
                "name": linter.name,
                "passed": passed,
                "exit_code": result.exit_code,
                "findings": None if findings is None else len(findings),
                "first": (findings or [])[:_SHOWN],
            }
            if not passed and not findings:
                report["output"] = tail(result.stdout + result.stderr, 2000)
            reports.append(report)
            checks.append(Check(linter.name, passed, _summary(result, findings, self.timeout)))
        details = {"linters": reports}
        if runs and runs[-1][1].timed_out:
            message = f"timed out after {self.timeout:g}s ({runs[-1][0].name})"
            return GradeResult(self.kind, self.name, False, 0.0, message, details)
        passing = sum(check.passed for check in checks)
        failing = [check.name for check in checks if not check.passed]
        message = f"{passing}/{len(checks)} linters passed"
        if failing:
            message += " (failed: " + ", ".join(failing) + ")"
        return checks_result(
            self.kind,
            self.name,
            checks,
            threshold=self.threshold,
            details=details,
            message=message,
        )


def _summary(result: ProcessResult, findings: list[Any] | None, timeout: float) -> str:
    if result.timed_out:
        return f"timed out after {timeout:g}s"
    counted = "" if findings is None else f", {len(findings)} findings"
    return f"exit code {result.exit_code}{counted}"
