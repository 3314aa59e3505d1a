"""Running one command and reading its streams: the runner shared by the `program`, `build`
and `lint` kinds; and the registry of the children gradekit runs right now.

A command runs without a shell, as the leader of its own process group, in a scratch folder
(a copy of the workspace by default), with a scrubbed environment, resource limits set in the
child with `setrlimit`, and optionally without network (a new network namespace via `unshare`).
Output is read incrementally and capped per stream, so a chatty command neither blocks on a
full pipe nor fills memory. At the timeout, and also when the leader exits, the whole process
group is killed: nothing the command started is left running. (Resource limits: `limits`;
the bubblewrap prefix: `bubblewrap`.)

The streams: output read as it comes and capped (`Capture`), input fed, until the leader
exits, the deadline passes or the grade is cancelled (`communicate`); then the whole process
group is killed and what is left in the pipes collected.

The children registry (`child_started`, `child_ended`, `kill_children`): every command's
process group while it runs, and every warm worker, so that a process about to exit at once
(a second Ctrl-C) can kill them first instead of leaving them running. Registering costs a
dict operation.

Imports: the core (`gradekit.core.errors`), `bubblewrap` (the `Jail` type) and `limits`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import os
import resource
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final, TypeVar

import attrs

from gradekit.core.errors import CommandError, SandboxError
from gradekit.process.bubblewrap import Jail
from gradekit.process.limits import (
    exec_failure,
    launched,
    limit_failure,
    limit_prefix,
    starts_as_is,
)

__all__ = [
    "CHUNK",
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_MEMORY_LIMIT",
    "Capture",
    "Limits",
    "ProcessResult",
    "child_ended",
    "child_started",
    "communicate",
    "in_thread",
    "kill_children",
    "kill_group",
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
    child_started(process.pid, group=True)
    try:
        out, err, timed_out = communicate(process, data, started + timeout, limits.output, cancel)
    finally:
        kill_group(process)
        process.wait()
        child_ended(process.pid)
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


# -- the streams -------------------------------------------------------------------------------

CHUNK: Final = 65536
"""Bytes read from, or written to, a pipe at a time."""
_POLL: Final = 0.1  # seconds between checks for cancellation while waiting
_DRAIN: Final = 1.0  # seconds to collect what is left in the pipes after the group is killed


class Capture:
    """One output stream, kept up to `limit` bytes; the rest is counted and dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        if self.dropped:
            text += (
                f"\n[gradekit: output cut at {self.limit} bytes; {self.dropped} more bytes dropped]"
            )
        return text


def _exited(process: subprocess.Popen[bytes]) -> bool:
    # WNOWAIT leaves the leader a zombie, so its process group id cannot be reused before the
    # group is killed.
    info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None and info.si_pid == process.pid


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command's whole process group (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def communicate(
    process: subprocess.Popen[bytes],
    data: bytes | None,
    deadline: float,
    output_limit: int,
    cancel: threading.Event | None,
) -> tuple[Capture, Capture, bool]:
    """Feed `data`, read stdout and stderr (each kept up to `output_limit` bytes) until the
    leader exits, `deadline` (a monotonic instant) passes or `cancel` is set; the group is
    then killed. Returns (stdout, stderr, whether the deadline ended it)."""
    assert process.stdout is not None and process.stderr is not None
    out, err = Capture(output_limit), Capture(output_limit)
    pending = memoryview(data or b"")
    selector, pidfd = _watch(process, out, err, bool(pending))
    timed_out = False
    killed_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if killed_at is None:
                stop = now >= deadline or (cancel is not None and cancel.is_set())
                timed_out = now >= deadline
                if stop or _exited(process):
                    # Leftover children would hold the pipes open: kill the whole group, then
                    # collect what is already in the pipes.
                    kill_group(process)
                    killed_at = now
            reading = any(key.data is not None for key in selector.get_map().values())
            if killed_at is not None and (not reading or now - killed_at > _DRAIN):
                break
            if killed_at is None:
                wait = max(min(_POLL, deadline - now), 0.0)
            else:
                wait = _DRAIN - (now - killed_at)
            for key, _ in selector.select(wait):
                if key.fileobj is process.stdin:
                    pending = _feed(process.stdin, pending)
                    if not pending:
                        selector.unregister(process.stdin)
                        process.stdin.close()
                elif key.data is None:  # the pidfd: the leader has exited
                    selector.unregister(key.fileobj)
                else:
                    chunk = os.read(key.fd, CHUNK)
                    if chunk:
                        key.data.add(chunk)
                    else:
                        selector.unregister(key.fileobj)
    finally:
        selector.close()
        if pidfd is not None:
            os.close(pidfd)
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(OSError):
                process.stdin.close()
    return out, err, timed_out


def _watch(
    process: subprocess.Popen[bytes], out: Capture, err: Capture, feeding: bool
) -> tuple[selectors.BaseSelector, int | None]:
    """A selector over the pipes (data: their capture) and the leader's pidfd (data: None)."""
    assert process.stdout is not None and process.stderr is not None
    selector = selectors.DefaultSelector()
    for stream, capture in ((process.stdout, out), (process.stderr, err)):
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ, capture)
    # A pidfd wakes the loop the moment the leader exits; without one, poll every _POLL.
    pidfd = os.pidfd_open(process.pid) if hasattr(os, "pidfd_open") else None
    if pidfd is not None:
        selector.register(pidfd, selectors.EVENT_READ, None)
    if process.stdin is not None:
        os.set_blocking(process.stdin.fileno(), False)
        if feeding:
            selector.register(process.stdin, selectors.EVENT_WRITE, None)
        else:
            process.stdin.close()
    return selector, pidfd


def _feed(stdin: IO[bytes], pending: memoryview) -> memoryview:
    """Write what the pipe takes now; a reader that went away gets nothing more."""
    try:
        written = os.write(stdin.fileno(), pending[:CHUNK])
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        return pending[len(pending) :]
    return pending[written:]


# -- the children gradekit runs right now ----------------------------------------------------

_children_lock = threading.Lock()
_live: dict[int, bool] = {}  # pid -> whether it leads a process group of its own


def child_started(pid: int, *, group: bool) -> None:
    """Note a child that now runs; `group`: it leads its own process group (kill the group)."""
    with _children_lock:
        _live[pid] = group


def child_ended(pid: int) -> None:
    """Forget a child that has been reaped."""
    with _children_lock:
        _live.pop(pid, None)


def kill_children() -> None:
    """SIGKILL every child still registered (and the groups they lead). Safe in a signal
    handler: no lock is waited for."""
    if not _children_lock.acquire(timeout=0.1):
        return
    try:
        live = list(_live.items())
    finally:
        _children_lock.release()
    for pid, group in live:
        with contextlib.suppress(OSError):
            if group:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
