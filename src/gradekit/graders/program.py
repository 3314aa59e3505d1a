"""The `program` kind: run a command in the sandbox and check its exit code and output."""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from gradekit.core.errors import OptionError, SandboxError
from gradekit.core.types import GradeResult, Sample, as_text, thaw
from gradekit.graders._checks import Check, checks_result, validate_threshold
from gradekit.graders._patterns import Pattern, workspace_error
from gradekit.process.commands import ProcessResult
from gradekit.process.options import SandboxOptions, tail

__all__ = ["Program", "command_argv", "process_details"]


def command_argv(value: Any, field: str) -> tuple[str, ...] | None:
    """A command as argv: a list of strings, or a string split the way a shell would
    split it (quotes respected; nothing expanded, no shell run). None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as error:
            raise OptionError(field, f"cannot split {value!r}: {error}") from None
    elif isinstance(value, (list, tuple)) and all(isinstance(part, str) for part in value):
        argv = list(value)
    else:
        raise OptionError(field, f"expected a list of strings or a string, got {value!r}")
    if not argv:
        raise OptionError(field, "the command is empty; give the program to run")
    return tuple(argv)


def _scalar(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (Mapping, list, tuple)):
        raise OptionError("expected_output", f"expected a string, got {value!r}")
    return as_text(value)


def _stdin_text(value: Any) -> str:
    """The sample's output as the command's stdin: text as is, structures as JSON."""
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(thaw(value))
    return as_text(value)


def process_details(result: ProcessResult) -> dict[str, Any]:
    """The JSON details every process-running kind reports for one command."""
    return {
        "command": list(result.argv),
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "stdout": tail(result.stdout),
        "stderr": tail(result.stderr),
        "process_ms": round(result.duration_ms, 3),
    }


@attrs.frozen
class Program(SandboxOptions):
    """Runs `command` (no shell) with the sample's output on stdin and checks what it did.

    Checks: the exit code equals `expected_exit_code` (default 0) and, when
    `expected_output` is set, the chosen `stream` matches it (`contains`, `exact` or `regex`).
    Past `timeout` the process group is killed and the result fails with exit code -1.
    A command that cannot be found or started gives an error result, not a failure.
    """

    kind: ClassVar[str] = "program"
    deterministic: ClassVar[bool] = False
    """A command may give a different answer each time, and the details carry its measured time."""
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"command": ["true"]},
        {"command": ["echo", "hi"], "expected_output": "hi"},
    )

    name: str = attrs.field(kw_only=True, default="program")
    command: Any = attrs.field(kw_only=True, default=None)
    test_command: Any = attrs.field(kw_only=True, default=None)
    expected_exit_code: int = attrs.field(kw_only=True, default=0)
    expected_output: Any = attrs.field(kw_only=True, default=None, converter=_scalar)
    match: Literal["contains", "exact", "regex"] = attrs.field(kw_only=True, default="contains")
    stream: Literal["stdout", "stderr", "both"] = attrs.field(kw_only=True, default="stdout")
    stdin: str | None = attrs.field(kw_only=True, default=None)
    threshold: float | None = attrs.field(kw_only=True, default=None, validator=validate_threshold)
    _argv: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _regex: Pattern | None = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        command = command_argv(self.command, "command")
        alias = command_argv(self.test_command, "test_command")
        if command is not None and alias is not None:
            raise OptionError("test_command", "give either command or test_command, not both")
        argv = command or alias
        if argv is None:
            raise OptionError("command", "this option is required: the command to run")
        object.__setattr__(self, "_argv", argv)
        regex = None
        if self.match == "regex":
            if self.expected_output is None:
                raise OptionError("match", "match: regex needs an expected_output pattern")
            regex = Pattern(self.expected_output, "expected_output", multiline=True)
        object.__setattr__(self, "_regex", regex)

    def _grade(self, sample: Sample, cancel: threading.Event | None) -> GradeResult:
        if sample.workspace is not None:
            error = workspace_error(sample)
            if error is not None:
                return GradeResult.of_error(self.kind, self.name, error)
        stdin = self.stdin if self.stdin is not None else _stdin_text(sample.output)
        deadline = time.monotonic() + self.timeout
        try:
            with self.open_sandbox(sample) as box:
                result = self.execute(
                    box, self._argv, deadline=deadline, stdin=stdin, cancel=cancel
                )
        except (SandboxError, OSError) as error:  # CommandError is an OSError
            return GradeResult.of_error(self.kind, self.name, error)
        details = process_details(result)
        if result.timed_out:
            message = f"timed out after {self.timeout:g}s"
            return GradeResult(self.kind, self.name, False, 0.0, message, details)
        checks = [
            Check(
                "exit code",
                result.exit_code == self.expected_exit_code,
                f"exited with {result.exit_code} (expected {self.expected_exit_code})",
            )
        ]
        if self.expected_output is not None:
            checks.append(self._output_check(result))
        return checks_result(
            self.kind, self.name, checks, threshold=self.threshold, details=details
        )

    def _output_check(self, result: ProcessResult) -> Check:
        if self.stream == "stdout":
            text = result.stdout
        elif self.stream == "stderr":
            text = result.stderr
        else:
            text = result.stdout + result.stderr
        expected = self.expected_output
        assert expected is not None
        if self._regex is not None:
            ok = self._regex.search(text) is not None
            verb = "matches" if ok else "does not match"
            return Check("output", ok, f"{self.stream} {verb} /{expected}/")
        if self.match == "exact":
            # Trailing whitespace (the final newline of `print`) is not part of the comparison.
            ok = text.rstrip() == expected.rstrip()
            shown = tail(text, 200)
            message = f"{self.stream} equals {expected!r}" if ok else f"{self.stream} is {shown!r}"
            return Check("output", ok, message + ("" if ok else f", expected {expected!r}"))
        ok = expected in text
        verb = "contains" if ok else "does not contain"
        return Check("output", ok, f"{self.stream} {verb} {expected!r}")
