"""The `program` kind: run a command in the sandbox and check its exit code and output; and
the options every process-running kind shares (program, build, lint), and how they apply.

`SandboxOptions` is an attrs base class: its fields are the sandbox options with their
defaults; a kind subclasses it and adds its own. `_grade(sample, cancel)` is the one method a
kind writes; `grade`, `grade_blocking` (cancellable, for the runner's worker threads) and
`agrade` (which runs it on a worker thread, cancellable) come free.
`sandbox` (auto, bwrap, none; unset: the run's, else auto) decides whether commands run in
bubblewrap (`gradekit.process.bubblewrap`). `command_argv` reads a command option, for every
kind that runs one.

Imports the core, `gradekit.process` (`commands`, `scratch`, `bubblewrap`) and the graders'
shared helpers.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal

import attrs

from gradekit.core.errors import OptionError, SandboxError
from gradekit.core.types import EMPTY, FrozenDict, GradeResult, Sample, as_text, thaw
from gradekit.graders.patterns import Pattern, workspace_error
from gradekit.graders.results import Check, checks_result, timeout_seconds, validate_threshold
from gradekit.process import bubblewrap as _bwrap
from gradekit.process import bubblewrap as _sandbox_mode
from gradekit.process.commands import (
    DEFAULT_MAX_OUTPUT,
    DEFAULT_MEMORY_LIMIT,
    Limits,
    ProcessResult,
    in_thread,
    resolve,
    run,
)
from gradekit.process.scratch import DEFAULT_MAX_FILES, DEFAULT_MAX_SIZE, Sandbox

__all__ = [
    "Program",
    "SandboxOptions",
    "command_argv",
    "parse_size",
    "positive",
    "process_details",
    "required_size",
    "tail",
    "timeout_seconds",
]

_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_TAIL = 4000  # characters of output kept in details


def parse_size(value: Any, field: str, *, allow_none: bool) -> int | None:
    """Bytes from `1048576`, `"512MiB"`, `"2G"` or `"64 KB"` (units are binary: K = 1024)."""
    if value is None and allow_none:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _SIZE.match(value) if isinstance(value, str) else None
    if match is not None:
        size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
        if size > 0:
            return size
    unit = " or null (no limit)" if allow_none else ""
    raise OptionError(
        field, f"expected a size such as 1048576, '512MiB' or '2GiB'{unit}, got {value!r}"
    )


def _memory(value: Any) -> int | None:
    return parse_size(value, "memory_limit", allow_none=True)


def required_size(value: Any, field: str) -> int:
    """`parse_size` for an option that must have a size (no null)."""
    size = parse_size(value, field, allow_none=False)
    assert size is not None
    return size


def _output(value: Any) -> int:
    return required_size(value, "max_output")


def _workspace_size(value: Any) -> int:
    return required_size(value, "max_workspace_size")


def _env(value: Any) -> FrozenDict[str, str | None]:
    """`[NAME, ...]` passes those variables through; `{NAME: value}` sets them (null: pass)."""
    if value is None:
        return EMPTY
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return FrozenDict(dict.fromkeys(_names(value, listed=True)))
    if isinstance(value, Mapping) and all(
        isinstance(key, str) and (item is None or isinstance(item, (str, int, float)))
        for key, item in value.items()
    ):
        _names(value, listed=False)
        return FrozenDict({key: None if item is None else str(item) for key, item in value.items()})
    raise OptionError(
        "env", f"expected a list of variable names or a map of NAME: value, got {value!r}"
    )


def _names(names: Iterable[str], *, listed: bool) -> Iterable[str]:
    """`names`, each checked to be a variable name: not empty, no `=` (`FOO=bar` in a list
    would pass a variable of that name through, and set nothing)."""
    for name in names:
        variable, equals, setting = name.partition("=")
        if not name or equals or "\0" in name:
            hint = ""
            if listed and variable and equals:
                hint = f"; to set {variable}, write env: {{{variable}: {setting}}}"
            raise OptionError("env", f"{name!r} is not a variable name{hint}")
    return names


def _available(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    problem = _sandbox_mode.requested_problem(value)
    if problem is not None:
        raise OptionError(attribute.name, problem)


def positive(_: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    """attrs validator: a positive, finite number (or None)."""
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise OptionError(attribute.name, f"must be a positive number, got {value!r}")


def tail(text: str, limit: int = _TAIL) -> str:
    """The last `limit` characters of `text`, marked when cut."""
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


@attrs.frozen
class SandboxOptions:
    """Base of the process-running kinds: the sandbox options and `grade`/`agrade`."""

    kind: ClassVar[str] = ""
    sandboxes_itself: ClassVar[bool] = True
    """Each grade runs its commands in a process and a sandbox of their own: the runner
    grades it in its own process even under `isolation: process`, whose worker would only
    weaken that sandbox (`gradekit.registry.registry.sandboxes_itself`)."""

    timeout: float = attrs.field(kw_only=True, default=30.0, validator=timeout_seconds)
    copy_workspace: bool = attrs.field(kw_only=True, default=True)
    """Run in a temporary copy of the workspace; false runs in place."""
    env: Any = attrs.field(kw_only=True, default=None, converter=_env)
    """Variables the command may see besides the defaults: names passed through, or {NAME: val}."""
    memory_limit: Any = attrs.field(kw_only=True, default=DEFAULT_MEMORY_LIMIT, converter=_memory)
    """Bytes or a size (512MiB, 2G) the command may use; null for none."""
    cpu_limit: int | None = attrs.field(kw_only=True, default=None, validator=positive)
    """CPU seconds the command may use."""
    max_output: Any = attrs.field(kw_only=True, default=DEFAULT_MAX_OUTPUT, converter=_output)
    """Bytes kept per stream (stdout, stderr)."""
    max_workspace_size: Any = attrs.field(
        kw_only=True, default=DEFAULT_MAX_SIZE, converter=_workspace_size
    )
    """File data the workspace copy may hold (bytes, or a size such as 256MiB)."""
    max_workspace_files: int = attrs.field(
        kw_only=True, default=DEFAULT_MAX_FILES, validator=positive
    )
    """Files, folders and links the workspace copy may hold."""
    network: bool = attrs.field(kw_only=True, default=True)
    """false: the command has no network at all."""
    sandbox: _sandbox_mode.Mode | None = attrs.field(
        kw_only=True, default=None, validator=_available
    )

    @property
    def limits(self) -> Limits:
        """The resource limits these options ask for."""
        return Limits(memory=self.memory_limit, cpu=self.cpu_limit, output=self.max_output)

    def open_sandbox(self, sample: Sample) -> Sandbox:
        """A scratch sandbox over the sample's workspace (copied unless copy_workspace=false);
        without a workspace, a spare root as empty as new when there is one. The copy holds at
        most `max_workspace_size` bytes of data and `max_workspace_files` entries."""
        return Sandbox(
            sample.workspace,
            copy=self.copy_workspace,
            defer=True,
            reuse=True,
            max_size=self.max_workspace_size,
            max_files=self.max_workspace_files,
        )

    def sandbox_mode(self) -> str:
        """The sandbox these commands get: this grader's own, else the run's, else `auto`."""
        if self.sandbox is not None:
            return self.sandbox
        return _sandbox_mode.run_default()

    def execute(
        self,
        box: Sandbox,
        argv: Sequence[str],
        *,
        deadline: float,
        stdin: str | None = None,
        extra_env: Mapping[str, str | None] | None = None,
        search: Sequence[str] = (),
        cancel: threading.Event | None = None,
        mounts: _bwrap.Mounts = _bwrap.NO_MOUNTS,
    ) -> ProcessResult:
        """Run `argv` in `box` with these options, until `deadline` (a time.monotonic value).

        `extra_env` holds variables a preset sets before the user's `env` applies; `search`
        holds folders looked in after PATH; `mounts` what a toolchain needs in bubblewrap.
        Raises CommandError / SandboxError.
        """
        import contextlib
        import os
        import time

        env = box.env({**(extra_env or {}), **self.env})
        command = resolve(argv[0], env, box.cwd, search)
        _sandbox_mode.refuse_nested_command(self.sandbox_mode())
        with contextlib.ExitStack() as stack:
            jail = None
            if _sandbox_mode.uses_bwrap(self.sandbox_mode()):
                for cache in mounts.writable:
                    os.makedirs(cache, exist_ok=True)
                readonly = _bwrap.command_folders(command, env.get("PATH", ""), search)
                jail = stack.enter_context(
                    _bwrap.jail(
                        _sandbox_mode.bwrap_executable(),
                        readonly=[*readonly, *mounts.readonly],
                        writable=[str(box.root), str(box.cwd), *mounts.writable],
                        network=self.network,
                        cwd=str(box.cwd),
                        hidden=mounts.hidden,
                    )
                )
            return run(
                [command, *argv[1:]],
                cwd=box.cwd,
                env=env,
                timeout=max(deadline - time.monotonic(), 0.0),
                stdin=stdin,
                limits=self.limits,
                network=self.network,
                cancel=cancel,
                jail=jail,
            )

    def _grade(self, sample: Sample, cancel: threading.Event | None) -> GradeResult:
        raise NotImplementedError

    def grade(self, sample: Sample) -> GradeResult:
        """Grade one sample, running its commands to completion or to the timeout."""
        return self._grade(sample, None)

    def grade_blocking(self, sample: Sample, cancel: threading.Event) -> GradeResult:
        """Grade in this thread; setting `cancel` kills the running command at once (the
        runner's timeout; see `gradekit.core.types.BlockingGrader`)."""
        return self._grade(sample, cancel)

    async def agrade(self, sample: Sample) -> GradeResult:
        """Grade without blocking the event loop; cancelling kills the running command."""
        return await in_thread(lambda cancel: self._grade(sample, cancel))


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
    """The command: a list, or a string split as a shell splits words (no shell is run)."""
    test_command: Any = attrs.field(kw_only=True, default=None)
    """An alias of `command` (give one of them)."""
    expected_exit_code: int = attrs.field(kw_only=True, default=0)
    """The exit code that passes."""
    expected_output: Any = attrs.field(kw_only=True, default=None, converter=_scalar)
    """When set, what the output must hold (see `match` and `stream`)."""
    match: Literal["contains", "exact", "regex"] = attrs.field(kw_only=True, default="contains")
    """How the output is checked against `expected_output`: contains, exact or regex."""
    stream: Literal["stdout", "stderr", "both"] = attrs.field(kw_only=True, default="stdout")
    """The output checked: stdout, stderr or both."""
    stdin: str | None = attrs.field(kw_only=True, default=None)
    """Text fed to the command (default: the sample's output)."""
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
