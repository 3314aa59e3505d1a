"""The options every process-running kind shares (program, build, lint), and how they apply.

`SandboxOptions` is an attrs base class: its fields are the sandbox options with their
defaults; a kind subclasses it and adds its own. `_grade(sample, cancel)` is the one method a
kind writes; `grade`, `grade_blocking` (cancellable, for the runner's worker threads) and
`agrade` (which runs it on a worker thread, cancellable) come free.
`sandbox` (auto, bwrap, none; unset: the run's, else auto) decides whether commands run in
bubblewrap (`gradekit.process.bubblewrap`).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from gradekit._errors import OptionError
from gradekit._frozen import EMPTY, FrozenDict
from gradekit._seconds import seconds_problem
from gradekit._types import GradeResult, Sample
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

__all__ = ["SandboxOptions", "parse_size", "positive", "tail", "timeout_seconds"]

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


def timeout_seconds(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """attrs validator: a timeout gradekit accepts (the one rule, in `gradekit._seconds`)."""
    problem = seconds_problem(value)
    if problem is not None:
        raise OptionError(attribute.name, problem)


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
    weaken that sandbox (`gradekit.registry.abilities.sandboxes_itself`)."""

    timeout: float = attrs.field(kw_only=True, default=30.0, validator=timeout_seconds)
    copy_workspace: bool = attrs.field(kw_only=True, default=True)
    env: Any = attrs.field(kw_only=True, default=None, converter=_env)
    memory_limit: Any = attrs.field(kw_only=True, default=DEFAULT_MEMORY_LIMIT, converter=_memory)
    cpu_limit: int | None = attrs.field(kw_only=True, default=None, validator=positive)
    max_output: Any = attrs.field(kw_only=True, default=DEFAULT_MAX_OUTPUT, converter=_output)
    max_workspace_size: Any = attrs.field(
        kw_only=True, default=DEFAULT_MAX_SIZE, converter=_workspace_size
    )
    max_workspace_files: int = attrs.field(
        kw_only=True, default=DEFAULT_MAX_FILES, validator=positive
    )
    network: bool = attrs.field(kw_only=True, default=True)
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
        runner's timeout; see `gradekit._types.BlockingGrader`)."""
        return self._grade(sample, cancel)

    async def agrade(self, sample: Sample) -> GradeResult:
        """Grade without blocking the event loop; cancelling kills the running command."""
        return await in_thread(lambda cancel: self._grade(sample, cancel))
