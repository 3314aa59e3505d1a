"""The `build` kind: does the workspace build? A command, or a preset per language."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import attrs

from gradekit._errors import OptionError, SandboxError
from gradekit._hints import did_you_mean
from gradekit._types import GradeResult, Sample, as_text
from gradekit.graders._checks import Check, checks_result, validate_threshold
from gradekit.graders._paths import workspace_error
from gradekit.graders._presets import ALIASES, MARKERS, PRESETS, Plan, canonical, detect, plan_for
from gradekit.graders.program import command_argv
from gradekit.process.commands import ProcessResult
from gradekit.process.options import SandboxOptions, tail, timeout_seconds

__all__ = ["Build"]

_LANGUAGES = sorted({*PRESETS, *ALIASES})
_UNDETECTED = (
    "ValueError: no build command: set `command` or `language` on the grader, or give the "
    "sample a `language`; the workspace has none of "
    + ", ".join(name for name, _ in MARKERS)
    + " to tell its toolchain"
)


def _language(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and value.lower() not in _LANGUAGES:
        suffix = did_you_mean(value.lower(), _LANGUAGES) or "use one of " + ", ".join(PRESETS)
        raise OptionError(attribute.name, f"no build preset for '{value}'; {suffix}")


def _command(value: Any) -> tuple[str, ...] | None:
    return command_argv(value, "command")


@attrs.frozen
class Build(SandboxOptions):
    """Builds the sample's workspace; passes when every build command exits 0.

    `command` runs as given; otherwise `language` (or the sample's `language` metadata, or the
    workspace's files: `Cargo.toml`, `go.mod`, `package.json`, `pyproject.toml`, a `Makefile`...)
    picks a preset, named in details (`language`, and `detected_from` when told by a file). A
    sample carrying a recorded outcome (`build_status: success|failed`, with
    `build_output`) is graded from it without running anything. Details keep each command's
    exit code and the tail of its output.
    """

    kind: ClassVar[str] = "build"

    name: str = attrs.field(kw_only=True, default="build")
    command: Any = attrs.field(kw_only=True, default=None, converter=_command)
    language: str | None = attrs.field(kw_only=True, default=None, validator=_language)
    timeout: float = attrs.field(kw_only=True, default=300.0, validator=timeout_seconds)
    threshold: float | None = attrs.field(kw_only=True, default=None, validator=validate_threshold)

    def _grade(self, sample: Sample, cancel: threading.Event | None) -> GradeResult:
        status = sample.metadata.get("build_status")
        if status is not None:
            return self._recorded(status, sample.metadata.get("build_output"))
        problem = workspace_error(sample)
        if problem is not None:
            return GradeResult.of_error(self.kind, self.name, problem)
        language = self.language or sample.metadata.get("language")
        about: dict[str, Any] = {}
        if self.command is None and not language:
            assert sample.workspace is not None  # workspace_error said so
            detected = detect(Path(sample.workspace))
            if detected is None:
                return GradeResult.of_error(self.kind, self.name, _UNDETECTED)
            language, about["detected_from"] = detected
        if self.command is None and str(language).lower() not in _LANGUAGES:
            return GradeResult.of_error(
                self.kind,
                self.name,
                f"ValueError: no build preset for language {language!r}; "
                f"use one of {', '.join(PRESETS)} or set `command`",
            )
        deadline = time.monotonic() + self.timeout
        try:
            with self.open_sandbox(sample) as box:
                if self.command is not None:
                    plan = Plan((self.command,))
                else:
                    about = {"language": canonical(str(language)), **about}
                    plan = plan_for(str(language), box.cwd, box.tmp)
                if not plan.steps:
                    return self._result(False, plan.empty or "nothing to build", about)
                results = self._run(plan, box, deadline, cancel)
        except (SandboxError, OSError) as error:  # CommandError is an OSError
            return GradeResult.of_error(self.kind, self.name, error)
        return self._outcome(results, about)

    def _run(
        self, plan: Plan, box: Any, deadline: float, cancel: threading.Event | None
    ) -> list[ProcessResult]:
        results = []
        for step in plan.steps:
            result = self.execute(
                box,
                step,
                deadline=deadline,
                extra_env=plan.env,
                search=plan.search,
                cancel=cancel,
                mounts=plan.mounts,
            )
            results.append(result)
            if result.timed_out or (result.exit_code != 0 and not plan.keep_going):
                break
        return results

    def _outcome(self, results: list[ProcessResult], about: dict[str, Any]) -> GradeResult:
        failed = [result for result in results if result.exit_code != 0]
        last = failed[0] if failed else results[-1]
        details: dict[str, Any] = {
            **about,
            "command": list(last.argv),
            "commands": len(results),
            "exit_code": last.exit_code,
            "stderr": tail("".join(result.stderr for result in failed or results)),
            "stdout": tail("".join(result.stdout for result in failed or results)),
        }
        if last.timed_out:
            return self._result(False, f"timed out after {self.timeout:g}s", details)
        if not failed:
            return self._result(True, "built", details)
        details["failed_commands"] = [" ".join(result.argv) for result in failed]
        return self._result(False, f"build failed with exit code {last.exit_code}", details)

    def _recorded(self, status: Any, output: Any) -> GradeResult:
        if status not in ("success", "failed"):
            return GradeResult.of_error(
                self.kind,
                self.name,
                f"ValueError: recorded build_status must be 'success' or 'failed', got "
                f"{status!r}; fix the sample",
            )
        details = {"recorded": True, "build_status": status, "stderr": tail(as_text(output))}
        return self._result(status == "success", f"recorded build: {status}", details)

    def _result(self, passed: bool, message: str, details: dict[str, Any]) -> GradeResult:
        return checks_result(
            self.kind,
            self.name,
            [Check("build", passed, message)],
            threshold=self.threshold,
            details=details,
            message=message,
        )
