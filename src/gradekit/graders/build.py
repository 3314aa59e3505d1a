"""The `build` kind: does the workspace build? A command, or a preset per language."""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar

import attrs

from gradekit._options import OptionError, close_matches
from gradekit._process import ProcessResult, SandboxError
from gradekit._types import GradeResult, Sample, as_text
from gradekit.graders._checks import Check, checks_result, validate_threshold
from gradekit.graders._paths import workspace_error
from gradekit.graders._presets import ALIASES, PRESETS, Plan, plan_for
from gradekit.graders._sandbox import SandboxOptions, tail, timeout_seconds
from gradekit.graders.program import command_argv

__all__ = ["Build"]

_LANGUAGES = sorted({*PRESETS, *ALIASES})


def _language(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and value.lower() not in _LANGUAGES:
        hint = close_matches(value.lower(), _LANGUAGES)
        suffix = f"did you mean '{hint[0]}'?" if hint else "use one of " + ", ".join(PRESETS)
        raise OptionError(attribute.name, f"no build preset for '{value}'; {suffix}")


def _command(value: Any) -> tuple[str, ...] | None:
    return command_argv(value, "command")


@attrs.frozen
class Build(SandboxOptions):
    """Builds the sample's workspace; passes when every build command exits 0.

    `command` runs as given; otherwise `language` (or the sample's `language` metadata) picks
    a preset. A sample carrying a recorded outcome (`build_status: success|failed`, with
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
        if self.command is None and not language:
            return GradeResult.of_error(
                self.kind,
                self.name,
                "ValueError: no build command: set `command` or `language` on the grader, "
                "or give the sample a `language`",
            )
        if self.command is None and str(language).lower() not in _LANGUAGES:
            return GradeResult.of_error(
                self.kind,
                self.name,
                f"ValueError: no build preset for language {language!r}; "
                f"use one of {', '.join(PRESETS)} or set `command`",
            )
        deadline = time.monotonic() + self.timeout
        try:
            with self.sandbox(sample) as box:
                if self.command is not None:
                    plan = Plan((self.command,))
                else:
                    plan = plan_for(str(language), box.cwd, box.tmp)
                if not plan.steps:
                    return self._result(False, plan.empty or "nothing to build", {})
                results = self._run(plan, box, deadline, cancel)
        except (SandboxError, OSError) as error:  # CommandError is an OSError
            return GradeResult.of_error(self.kind, self.name, error)
        return self._outcome(results)

    def _run(
        self, plan: Plan, box: Any, deadline: float, cancel: threading.Event | None
    ) -> list[ProcessResult]:
        results = []
        for step in plan.steps:
            result = self.execute(
                box, step, deadline=deadline, extra_env=plan.env, search=plan.search, cancel=cancel
            )
            results.append(result)
            if result.timed_out or (result.exit_code != 0 and not plan.keep_going):
                break
        return results

    def _outcome(self, results: list[ProcessResult]) -> GradeResult:
        failed = [result for result in results if result.exit_code != 0]
        last = failed[0] if failed else results[-1]
        details: dict[str, Any] = {
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
