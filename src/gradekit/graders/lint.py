"""The `lint` kind: run linters on the workspace; score = linters passing / linters run."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from gradekit._errors import CommandError, OptionError, SandboxError
from gradekit._hints import did_you_mean
from gradekit._types import GradeResult, Sample
from gradekit.graders._checks import Check, checks_result, validate_threshold
from gradekit.graders._linters import PRESETS, Linter
from gradekit.graders._paths import workspace_error
from gradekit.graders.program import command_argv
from gradekit.process.commands import ProcessResult, resolve
from gradekit.process.options import SandboxOptions, tail, timeout_seconds
from gradekit.process.scratch import Sandbox

__all__ = ["Lint"]

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
