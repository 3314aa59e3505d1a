"""`gradekit run` of a suite whose graders may hold the GIL, under a supervising process: a
grader stuck in C code cannot keep a signal from ending the run.

A thread-isolated grader of user code looping inside a C call that holds the GIL (Python's
`re` backtracking, a C extension's loop) stops every Python thread of its process, the
handlers of SIGINT, SIGTERM and SIGHUP included, for as long as the call lasts (hours). No
code of that process can help; another process can. Only such suites pay for one
(`gradekit.run.rescue.may_hold_the_gil`: a `code` grader or a pack's kind run in a thread);
a suite of gradekit's own kinds runs in one process, as always. For the others the command
forks once the suite is loaded, while it has a single thread:

- the child is the run, as it would have been (its reports streamed, its `--resume` log
  appended), with one addition: each finished case is also written to a scratch file (a
  `Rescue`) by the thread that finished it, before that thread grades anything else. Its
  C-level signal handler reports each signal it receives to the parent (Python's wakeup fd,
  written without the GIL), and a daemon thread beats once a second (it needs the GIL);
- the parent imports nothing more, forwards each SIGINT, SIGTERM or SIGHUP it receives that
  the child did not receive too (a terminal signals the whole process group: never twice),
  says once when the child has run no Python code past the run's timeout, and exits with the
  child's code;
- when the child has not beaten for `GRACE` seconds since a signal (it cannot act on it), the
  parent kills it, says so, and writes the reports itself from the cases that reached the
  scratch file (with `--resume`, those the log lacks are appended to it first), marked
  `"complete": false`, and exits 128 + the signal, as the child would have.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from gradekit.run.exits import adopt_exits, real_exit
from gradekit.run.rescue import may_hold_the_gil, written_part

if TYPE_CHECKING:
    from gradekit.suite.model import Suite

__all__ = ["GRACE", "supervise"]

GRACE: Final = 10.0
"""Seconds a run may stay silent (holding the GIL) after a signal before it is killed."""

_STOPPING: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_BEAT: Final = 1.0  # seconds between the child's beats
_SAME: Final = 0.3  # a signal the child reports this close to the parent's is the same one
_TICK: Final = 0.1


def supervise(
    args: argparse.Namespace,
    suite: Suite,
    *,
    rescue: bool,
    run: Callable[[argparse.Namespace], int],
) -> None:
    """Fork the run when the suite's graders may hold the GIL (see the module). In the child,
    or when the run is not supervised, return: the run goes on (`args.rescue_fd` is the
    scratch file to write finished cases to, when `rescue`: reports or a log are asked). The
    parent exits with the run's exit code once the run has ended (or was ended and its
    reports written by `run`). Only for the process's own command."""
    holders = may_hold_the_gil(suite, args.isolation)
    if not holders or args.executor != "local":
        return
    if threading.active_count() != 1 or not hasattr(os, "fork"):
        return  # forking a process with threads is not safe: run unsupervised
    scratch = _scratch_file() if rescue else None
    if rescue and scratch is None:
        return  # no temp folder to write in: the run says so itself
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # else the child prints what the parent had buffered again
    reading, writing = os.pipe()
    parent = os.getpid()
    # Held back until each side has its handlers: a signal in between is acted on after.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        pid = os.fork()
    except OSError:  # no memory or no process left for it: run unsupervised
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
        for fd in (reading, writing):
            os.close(fd)
        if scratch is not None:
            os.close(scratch[0])
            os.unlink(scratch[1])
        return
    if pid == 0:
        os.close(reading)
        _die_with(parent)
        adopt_exits()
        args.rescue_fd = None if scratch is None else scratch[0]
        _report_to_parent(writing)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
        return
    os.close(writing)
    path = None
    if scratch is not None:
        os.close(scratch[0])
        path = scratch[1]
    supervisor = _Parent(args, pid, reading, path, holders, run, timeout=suite.timeout)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
    code = supervisor.wait()
    # The run has ended and its reports are written: this process has nothing left to close,
    # and tearing its interpreter down would only cost the time the run's own teardown took.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    real_exit(code)


def _scratch_file() -> tuple[int, str] | None:
    """A scratch file named for this process (swept once it is gone), open for the run to
    map (`Rescue`)."""
    import tempfile

    from gradekit.core.scratch import scratch_prefix

    try:
        fd, name = tempfile.mkstemp(prefix=scratch_prefix("log"), suffix=".jsonl")
    except OSError:
        return None
    os.set_blocking(fd, True)
    flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)  # mapped by the run (`Rescue`)
    mapped = os.open(name, flags)
    os.close(fd)
    return mapped, name


def _die_with(parent: int) -> None:
    """In the child: be killed when the parent dies (a SIGKILL to the command ends the run,
    stuck or not, as it did with one process)."""
    with contextlib.suppress(Exception):  # not Linux, or no libc to call: best effort
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the call
        real_exit(128 + signal.SIGKILL)


def _report_to_parent(fd: int) -> None:
    """In the child: each signal received, and a beat a second, written to `fd`."""
    os.set_blocking(fd, False)
    signal.set_wakeup_fd(fd, warn_on_full_buffer=False)

    def beat() -> None:
        while True:
            with contextlib.suppress(OSError):  # a full pipe: the parent reads it soon
                os.write(fd, b"\0")
            time.sleep(_BEAT)

    threading.Thread(target=beat, name="gradekit-beat", daemon=True).start()


class _Parent:
    """The supervising side: wait for the child, forward signals, end it when it is stuck."""

    def __init__(  # noqa: PLR0917
        self,
        args: argparse.Namespace,
        pid: int,
        fd: int,
        scratch: str | None,
        holders: Sequence[str],
        run: Callable[[argparse.Namespace], int],
        *,
        timeout: float,
    ) -> None:
        self.args, self.pid, self.fd, self.scratch = args, pid, fd, scratch
        self.holders, self.run = holders, run
        self.received: list[tuple[int, float]] = []  # by the parent, not yet matched
        self.reported: list[tuple[int, float]] = []  # by the child, not yet matched
        self.owed: dict[int, int] = {}  # forwarded, the child's report not yet read
        self.first: tuple[int, float] | None = None  # the first stopping signal, and when
        self.beat = time.monotonic()
        # Silent this long, the run is past the timeout of its grades (the run's default; a
        # grader's own may be longer): said once per silence.
        self.stuck_after = (args.timeout or timeout) + GRACE
        self.told = False
        for signum in _STOPPING:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.first is not None and self._silent():
            # A second signal while the child cannot act: end it at once, as a run does.
            self._kill()
            with contextlib.suppress(OSError):
                os.write(2, b"gradekit: stopped at once (second interrupt)\n")
            self._remove_scratch()
            real_exit(128 + self.first[0])
        self.received.append((signum, time.monotonic()))

    def _silent(self) -> bool:
        return time.monotonic() - self.beat >= GRACE

    def wait(self) -> int:
        """Wait for the child (see the module); the run's exit code."""
        last = time.monotonic()
        try:  # readable when the child ends: its end is seen at once, not at the next tick
            ended = [os.pidfd_open(self.pid)]
        except (AttributeError, OSError):  # an older kernel
            ended = []
        while True:
            ready, _, _ = select.select([self.fd, *ended], [], [], _TICK)
            now = time.monotonic()
            if now - last > 1.0:  # the parent was stopped too (Ctrl-Z): no silence counted
                self.beat += now - last
            last = now
            if self.fd in ready:
                self._read(now)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                for fd in (self.fd, *ended):
                    os.close(fd)
                self._remove_scratch()
                code = os.waitstatus_to_exitcode(status)
                return code if code >= 0 else 128 - code  # killed by a signal: as shells say
            self._forward(now)
            if not self.told and now - self.beat >= self.stuck_after:
                self._tell()
            if self.first is not None and now - self.first[1] >= GRACE and self._silent():
                for fd in ended:
                    os.close(fd)
                return self._end_stuck()

    def _read(self, now: float) -> None:
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            return
        for signum in data:
            if signum == 0:  # a beat: the child runs Python code (its C handler needs not)
                self.beat, self.told = now, False
                continue
            if self.owed.get(signum):
                self.owed[signum] -= 1
            else:
                self.reported.append((signum, now))
            if self.first is None and signum in _STOPPING:
                self.first = (signum, now)

    def _forward(self, now: float) -> None:
        # A signal both received is the same one (a process group's); one the parent alone
        # received, after a moment, is forwarded; one the child alone received is its own.
        for signum, at in list(self.received):
            match = next((r for r in self.reported if r[0] == signum), None)
            if match is not None:
                self.received.remove((signum, at))
                self.reported.remove(match)
            elif now - at >= _SAME:
                self.received.remove((signum, at))
                self.owed[signum] = self.owed.get(signum, 0) + 1
                if self.first is None:
                    self.first = (signum, at)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signum)
        self.reported = [r for r in self.reported if now - r[1] < 2.0]

    def _which(self) -> str:
        if self.holders == ("*",):
            return "a grader of user code run in a thread"
        names = ", ".join(f"'{name}'" for name in self.holders[:5])
        return f"a grader of user code run in a thread ({names})"

    def _tell(self) -> None:
        self.told = True
        start = "\n" if sys.stderr.isatty() else ""  # off the progress bar's line
        print(
            f"{start}gradekit: the run has run no Python code for {self.stuck_after:.0f} s: "
            f"{self._which()} is likely stuck in C code holding the interpreter's lock "
            "(GIL), past its timeout, which cannot act; SIGTERM or Ctrl-C end the run with "
            f"its reports within {GRACE:.0f} s (give such a grader `isolation: process`)",
            file=sys.stderr,
            flush=True,
        )

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)

    def _end_stuck(self) -> int:
        assert self.first is not None
        signum = self.first[0]
        self._kill()
        os.close(self.fd)
        name = signal.Signals(signum).name
        print(
            f"gradekit: {name}: the run did not act on it for {GRACE:.0f} s: "
            f"{self._which()} is stuck in C code holding the interpreter's lock (GIL); the "
            "run was ended, its reports hold the cases that finished (give such a grader "
            "`isolation: process`)",
            file=sys.stderr,
            flush=True,
        )

        def at_once(again: int, frame: object) -> None:
            self._remove_scratch()
            real_exit(128 + signum)

        for stopping in _STOPPING:  # a second signal now ends the parent at once
            signal.signal(stopping, at_once)
        try:
            if self.scratch is None:  # no report was asked
                return 128 + signum
            written_part(self.scratch)
            if self.args.resume:
                _append_missing(self.scratch, self.args.resume)
            self.args.reports_only = self.scratch
            code = self.run(self.args)
        finally:
            self._remove_scratch()
        return 128 + signum if code != 2 else code

    def _remove_scratch(self) -> None:
        if self.scratch is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.scratch)


def _append_missing(scratch: str, log: str) -> None:
    """Append to the `--resume` log the cases of `scratch` it lacks (the killed run wrote
    them there first): the log then holds every case that finished, to resume from."""
    import json

    from gradekit.history.case_scores import key_of_data

    Key = tuple[str, int | None]

    def keys(path: str) -> tuple[set[Key], list[tuple[Key, bytes]]]:
        found: set[Key] = set()
        lines: list[tuple[Key, bytes]] = []
        with contextlib.suppress(OSError), open(path, "rb") as file:
            for line in file:
                if not line.endswith(b"\n"):
                    continue  # a line the killed run did not finish
                with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                    key = key_of_data(json.loads(line))
                    found.add(key)
                    lines.append((key, line))
        return found, lines

    logged, _ = keys(log)
    _, rescued = keys(scratch)
    missing = []
    for key, line in rescued:
        if key not in logged:
            logged.add(key)
            missing.append(line)
    if missing:
        with contextlib.suppress(OSError), open(log, "ab") as file:
            file.write(b"".join(missing))
