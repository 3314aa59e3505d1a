"""The sandboxed process runner shared by the `program`, `build` and `lint` kinds.

A command runs without a shell, as the leader of its own process group, in a scratch folder
(a copy of the workspace by default), with a scrubbed environment, resource limits set in the
child with `setrlimit`, and optionally without network (a new network namespace via `unshare`).
Output is read incrementally and capped per stream, so a chatty command neither blocks on a
full pipe nor fills memory. At the timeout, and also when the leader exits, the whole process
group is killed: nothing the command started is left running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import os
import resource
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs

from gradekit._errors import CommandError, SandboxError
from gradekit.process import children as _children
from gradekit.process.bubblewrap import Jail
from gradekit.process.limits import (
    exec_failure,
    launched,
    limit_failure,
    limit_prefix,
    starts_as_is,
)
from gradekit.process.scratch import Sandbox
from gradekit.process.streams import CHUNK, communicate, kill_group

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_MEMORY_LIMIT",
    "CommandError",
    "Limits",
    "ProcessResult",
    "Sandbox",
    "SandboxError",
    "in_thread",
    "resolve",
    "run",
    "run_async",
]

DEFAULT_MEMORY_LIMIT: Final = 2 * 1024**3
DEFAULT_MAX_OUTPUT: Final = 1024**2


@attrs.frozen
class Limits:
    """Resource limits of one run: data memory in bytes, CPU seconds, captured bytes per stream.

    None means unlimited (except `output`, which is always bounded).
    """

    memory: int | None = DEFAULT_MEMORY_LIMIT
    cpu: int | None = None
    output: int = DEFAULT_MAX_OUTPUT


@attrs.frozen
class ProcessResult:
    """What a finished (or killed) command did.

    `exit_code` is the command's exit status, negative for a signal, -1 after a timeout.
    `stdout_cut` / `stderr_cut` tell that the capture was cut at the output limit.
    """

    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_ms: float = 0.0
    stdout_cut: bool = False
    stderr_cut: bool = False


def resolve(command: str, env: Mapping[str, str], cwd: Path, extra_dirs: Sequence[str] = ()) -> str:
    """The full path of `command`: looked up on the environment's PATH (then `extra_dirs`), or
    relative to `cwd` when it contains a slash. Raises CommandError when there is none."""
    if "/" in command:
        path = cwd / command
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        raise CommandError(
            f"command '{command}' not found or not executable in the workspace; "
            "check the command's path"
        )
    search = os.pathsep.join([env.get("PATH", os.defpath), *extra_dirs])
    found = shutil.which(command, path=search)
    if found is None:
        raise CommandError(
            f"command '{command}' not found on PATH; install it or give its full path"
        )
    return found


@functools.cache
def _network_prefix() -> tuple[str, ...]:
    """The `unshare` prefix giving a command a new, empty network namespace on this machine."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise SandboxError(
            "network: false needs the `unshare` command (util-linux), which is not installed; "
            "install util-linux or set network: true"
        )
    # As root a plain new namespace works; otherwise a user namespace must come with it.
    prefix = (unshare, "-n") if os.geteuid() == 0 else (unshare, "--net", "--map-root-user")
    true = shutil.which("true") or "/bin/true"
    probe = subprocess.run([*prefix, true], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        reason = probe.stderr.strip() or f"exit code {probe.returncode}"
        raise SandboxError(
            f"network: false needs a new network namespace, but `{' '.join(prefix)}` failed "
            f"on this machine ({reason}); allow user namespaces or set network: true"
        )
    return prefix


def _limits_refused(command: str, reason: str) -> CommandError:
    """The error for limits the kernel would not set on `command`, whichever way they were set
    (the launcher, `prlimit`, `setrlimit` in the child)."""
    return CommandError(
        f"cannot set the limits of '{command}': {reason}; keep memory_limit and cpu_limit "
        "within the hard limits gradekit runs under (`ulimit -H -d -t`)"
    )


def _set_limits(limits: Limits) -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.memory is not None:
        # RLIMIT_DATA, not RLIMIT_AS: JVMs, V8 and Go reserve far more address space than they
        # use, and would not even start under an address-space cap of a few GiB.
        resource.setrlimit(resource.RLIMIT_DATA, (limits.memory, limits.memory))
    if limits.cpu is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu, limits.cpu + 1))


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    timeout: float,
    stdin: str | bytes | None = None,
    limits: Limits = Limits(),
    network: bool = True,
    cancel: threading.Event | None = None,
    jail: Jail | None = None,
) -> ProcessResult:
    """Run `argv` (no shell) to completion or to `timeout`, whichever comes first.

    `argv[0]` must already be a full path (see `resolve`). Raises CommandError when the command
    cannot be started and SandboxError when `network=False` cannot be honoured. Setting
    `cancel` kills the process group just as a timeout does. `jail` is an open bubblewrap
    prefix (`gradekit.process.bubblewrap.jail`, which then decides the network): killing its leader
    ends every process of its PID namespace.
    """
    args = tuple(argv)
    if jail is not None:
        prefix: tuple[str, ...] = jail.argv
    else:
        prefix = () if network else _network_prefix()
    limited = starts_as_is((*prefix, *args)[0])
    # The launcher's own failures come on a pipe of their own, closed when the command starts:
    # on stderr, a command could forge them and turn its failure into gradekit's error.
    report_read, report_write = os.pipe() if limited else (-1, -1)
    try:
        # None: the limits are set in the forked child instead (slower; see `limits`).
        limiter = limit_prefix(limits.memory, limits.cpu, report_write) if limited else None
        if limited and (limiter is None or not launched(limiter)):
            os.close(report_read)  # prlimit, or no prefix: the command must not inherit it
            os.close(report_write)
            report_read = report_write = -1
        return _run_started(
            args,
            prefix,
            jail.fds if jail is not None else (),
            limiter,
            report_read,
            report_write,
            cwd,
            env,
            timeout,
            stdin,
            limits,
            cancel,
        )
    finally:
        for fd in (report_read, report_write):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _run_started(  # noqa: PLR0917 - `run`'s arguments, after its pipe is made
    args: tuple[str, ...],
    prefix: tuple[str, ...],
    prefix_fds: tuple[int, ...],
    limiter: tuple[str, ...] | None,
    report_read: int,
    report_write: int,
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    timeout: float,
    stdin: str | bytes | None,
    limits: Limits,
    cancel: threading.Event | None,
) -> ProcessResult:
    setter = None if limiter is not None else functools.partial(_set_limits, limits)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            [*(limiter or ()), *prefix, *args],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=setter,  # noqa: PLW1509
            close_fds=True,
            pass_fds=(*prefix_fds, *((report_write,) if report_write >= 0 else ())),
        )
    except OSError as error:
        raise CommandError(
            f"cannot start '{args[0]}': {error.strerror or error}; check the command"
        ) from error
    except subprocess.SubprocessError as error:
        if setter is None:
            raise
        # `setter` raised in the child: setrlimit refused a limit.
        raise _limits_refused(args[0], "setrlimit refused them") from error
    _children.started(process.pid, group=True)
    try:
        out, err, timed_out = communicate(process, data, started + timeout, limits.output, cancel)
    finally:
        kill_group(process)
        process.wait()
        _children.ended(process.pid)
    exit_code = -1 if timed_out else process.returncode
    stderr = err.text()
    if limiter is not None:
        # `prlimit` has no such pipe: it says why on stderr.
        said = _reported(report_read) if report_read >= 0 else stderr
        refused = limit_failure(limiter, exit_code, said)
        if refused is not None:
            raise _limits_refused(args[0], refused)
        failure = None if prefix else exec_failure(exit_code, said)
        if failure is not None:
            raise CommandError(f"cannot start '{args[0]}': {failure}; check the command")
    return ProcessResult(
        argv=args,
        exit_code=exit_code,
        stdout=out.text(),
        stderr=stderr,
        timed_out=timed_out,
        duration_ms=(time.monotonic() - started) * 1000.0,
        stdout_cut=out.dropped > 0,
        stderr_cut=err.dropped > 0,
    )


def _reported(fd: int) -> str:
    """What the launcher wrote on its report pipe before it ended (nothing when the command
    started). Read without waiting: `run` holds the write end open until it returns."""
    chunks = []
    with contextlib.suppress(OSError):  # BlockingIOError: all of it is read
        os.set_blocking(fd, False)
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


T = TypeVar("T")

_EXECUTOR: concurrent.futures.ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()
_THREADS: Final = 64  # a thread waiting on a child costs little; the runner's --jobs bounds use


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _EXECUTOR  # noqa: PLW0603 - one lazily created pool per process
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = concurrent.futures.ThreadPoolExecutor(
                _THREADS, thread_name_prefix="gradekit-process"
            )
        return _EXECUTOR


async def in_thread(work: Callable[[threading.Event], T]) -> T:
    """Await `work(cancel)` run on a worker thread, without blocking the event loop.

    Cancelling the awaiting task sets `cancel`, which makes a `run` in progress kill its
    process group at once (a thread itself cannot be killed). `work` runs in a copy of the
    caller's context, so it sees the run in progress (its settings) as the caller does.
    """
    cancel = threading.Event()
    context = contextvars.copy_context()
    future = asyncio.get_running_loop().run_in_executor(_executor(), context.run, work, cancel)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.set()
        raise


async def run_async(argv: Sequence[str], **kwargs: Any) -> ProcessResult:
    """`run` awaited from a worker thread; cancelling the task kills the process group."""
    return await in_thread(lambda cancel: run(argv, cancel=cancel, **kwargs))
