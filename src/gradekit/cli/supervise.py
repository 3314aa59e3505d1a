"""`gradekit run` of a suite whose graders may hold the GIL, under a supervising process: a
grader stuck in C code cannot keep a signal from ending the run, nor the run from going on
past its timeout.

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
  written without the GIL), and a daemon thread beats once a second (it needs the GIL).
  Each thread of the lane also marks the grade it begins in a map shared with the parent
  (`gradekit.run.rescue.Marks`);
- the parent forwards each SIGINT, SIGTERM or SIGHUP it receives that the child did not
  receive too (a terminal signals the whole process group: never twice), and exits with the
  child's code;
- when the child has not beaten for `STUCK_GRACE` seconds, the parent looks for the thread
  that uses the CPU (the others wait for the GIL it holds) and reads its mark: a grade that
  has run `STUCK_GRACE` seconds past its timeout is abandoned. The parent kills the child, says so,
  gathers the cases that reached the scratch file into a log (the `--resume` log, else the
  first scratch file) with that grade's case recorded timed out (as the run records a grade
  that returned past its timeout), and forks the run again, through that log: the cases in
  it are not graded again, so each case is abandoned at most once and the run ends with every
  case once. A grade past its timeout would have been a timeout anyway: nothing is lost;
- a run silent past the run's timeout with no such grade (the thread that holds the GIL
  marked none: a thread a grader started, a case graded on the event loop) is said once;
- when the child has not beaten for `GRACE` seconds since a signal (it cannot act on it), or a
  grade is abandoned after one, the parent kills it, says so, and writes the reports itself
  from the cases gathered (the stuck grade's case among them when it was past its timeout),
  marked `"complete": false`, and exits 128 + the signal, as the child would have.
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

import attrs

from gradekit.report.text import escaped
from gradekit.run.exits import adopt_exits, real_exit
from gradekit.run.grade import case_of, turn_of
from gradekit.run.rescue import (
    Mark,
    Marks,
    gather,
    logged,
    may_hold_the_gil,
    running,
    written_part,
)
from gradekit.run.verdict import timed_out

if TYPE_CHECKING:
    from gradekit.report.model import CaseReport
    from gradekit.suite.model import Suite

__all__ = ["GRACE", "STUCK_GRACE", "stuck_case", "supervise"]

GRACE: Final = 10.0
"""Seconds a run may stay silent (holding the GIL) after a signal before it is killed."""

STUCK_GRACE: Final = 2.0
"""Seconds a grade may hold the GIL past its timeout, the run silent that long (two beats
missed), before it is abandoned: the run is killed and goes on without it."""

_STOPPING: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_BEAT: Final = 1.0  # seconds between the child's beats
_SAME: Final = 0.3  # a signal the child reports this close to the parent's is the same one
_TICK: Final = 0.1
_LOOK: Final = 0.5  # seconds between looks for a stuck grade while the run is silent


def supervise(
    args: argparse.Namespace,
    suite: Suite,
    *,
    rescue: bool,
    run: Callable[[argparse.Namespace], int],
) -> None:
    """Fork the run when the suite's graders may hold the GIL (see the module). In the child,
    or when the run is not supervised, return: the run goes on (`args.rescue_fd` is the
    scratch file to write finished cases to, `args.rescue_marks` where to mark grades, and
    after an abandoned grade `args.gathered` the log to go on from). The parent writes the
    reports of a run it ended when `rescue` (reports or a log are asked), and exits with the
    run's exit code once the run has ended. Only for the process's own command."""
    holders = may_hold_the_gil(suite, args.isolation)
    if not holders or args.executor != "local":
        return
    if threading.active_count() != 1 or not hasattr(os, "fork"):
        return  # forking a process with threads is not safe: run unsupervised
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # else the child prints what the parent had buffered again
    supervisor = _Parent(args, suite, holders, run, reports=rescue)
    try:
        if supervisor.start():
            return  # the child: the run
    except OSError:  # no temp folder to write in, no memory or process left: unsupervised
        supervisor.restore()
        return
    while True:
        code = supervisor.wait()
        if code is not None:
            break
        try:
            if supervisor.start():
                return  # the child: the rest of the run
        except OSError as error:
            print(f"gradekit: the run could not go on: {error}", file=sys.stderr, flush=True)
            code = supervisor.end_with_reports(None)
            break
    # The run has ended and its reports are written: this process has nothing left to close,
    # and tearing its interpreter down would only cost the time the run's own teardown took.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    real_exit(code)


def stuck_case(suite: Suite, mark: Mark, max_text: int | None) -> CaseReport | None:
    """The report of the case of the grade `mark`, abandoned past its timeout: that grade's
    timeout result alone (the case's other grades went with the process); None when the
    suite has no such case."""
    case = next((case for case in suite.cases() if mark.of(case)), None)
    if case is None or mark.turn >= len(case.turns):
        return None
    turn = case.turns[mark.turn]
    if mark.grader >= len(turn.graders):
        return None
    entry = turn.graders[mark.grader]
    started = time.perf_counter() - (time.monotonic() - mark.started)
    policy = case.policy or suite.policy
    alone = attrs.evolve(turn, graders=(entry,))
    report, decision = turn_of(mark.turn, alone, [timed_out(entry, mark.seconds)], policy, max_text)
    return case_of(case, [report], [decision], started, max_text)


def _scratch_file() -> tuple[int, str]:
    """A scratch file named for this process (swept once it is gone), open for the run to
    map (`Rescue`). Raises OSError."""
    import tempfile

    from gradekit.core.scratch import scratch_prefix

    fd, name = tempfile.mkstemp(prefix=scratch_prefix("log"), suffix=".jsonl")
    try:
        os.set_blocking(fd, True)
        flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)  # mapped by the run (`Rescue`)
        mapped = os.open(name, flags)
    except OSError:
        os.unlink(name)
        raise
    finally:
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
    """The supervising side: fork the run, wait for it, forward signals, end it when it is
    stuck, and fork it again after a grade it abandoned."""

    def __init__(
        self,
        args: argparse.Namespace,
        suite: Suite,
        holders: Sequence[str],
        run: Callable[[argparse.Namespace], int],
        *,
        reports: bool,
    ) -> None:
        self.args, self.suite, self.holders, self.run = args, suite, holders, run
        self.reports = reports
        self.marks = Marks()
        # Where the cases of killed runs gather, the run going on from it: the `--resume`
        # log, else the first run's scratch file (once that run was killed).
        self.log: str | None = None
        self.pid, self.fd, self.scratch = 0, -1, ""  # the run now, its pipe, its scratch file
        self.received: list[tuple[int, float]] = []  # by the parent, not yet matched
        self.reported: list[tuple[int, float]] = []  # by the child, not yet matched
        self.owed: dict[int, int] = {}  # forwarded, the child's report not yet read
        self.first: tuple[int, float] | None = None  # the first stopping signal, and when
        self.beat = self.look = time.monotonic()
        # Silent this long, the run is past the timeout of its grades (the run's default; a
        # grader's own may be longer): said once per silence.
        self.stuck_after = (args.timeout or suite.timeout) + GRACE
        self.told = False
        self.passed_over: set[Mark] = set()  # marks of grades that were not stuck
        # What the run's reports keep of each text (its samples' bound), for a stuck case's.
        self.max_text: int | None = None
        if not args.no_samples:
            self.max_text = 4096 if args.max_text is None else args.max_text
        self.saved = {signum: signal.getsignal(signum) for signum in _STOPPING}
        for signum in _STOPPING:
            signal.signal(signum, self._on_signal)

    def restore(self) -> None:
        """The signal handlers as they were."""
        for signum, handler in self.saved.items():
            signal.signal(signum, handler)

    def start(self) -> bool:
        """Fork the run; True in the child. Raises OSError (nothing left behind)."""
        fd, path = _scratch_file()
        reading, writing = os.pipe()
        parent = os.getpid()
        self.marks.clear()
        # Held back until each side has its handlers: a signal in between is acted on after.
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
        try:
            pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
            for opened in (reading, writing, fd):
                os.close(opened)
            os.unlink(path)
            raise
        if pid == 0:
            os.close(reading)
            self.restore()
            _die_with(parent)
            adopt_exits()
            self.args.rescue_fd, self.args.rescue_marks = fd, self.marks
            if self.log is not None and not self.args.resume:
                self.args.gathered = self.log
            _report_to_parent(writing)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
            return True
        os.close(writing)
        os.close(fd)
        self.pid, self.fd, self.scratch = pid, reading, path
        self.reported.clear()  # the killed run's (the parent's own are forwarded to this one)
        self.owed.clear()
        self.beat = self.look = time.monotonic()
        self.told = False
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
        return False

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

    def wait(self) -> int | None:
        """Wait for the run (see the module); its exit code, or None once a grade was
        abandoned and the run must go on."""
        last = time.monotonic()
        try:  # readable when the child ends: its end is seen at once, not at the next tick
            ended = [os.pidfd_open(self.pid)]
        except (AttributeError, OSError):  # an older kernel
            ended = []
        try:
            return self._watch(ended, last)
        finally:
            for fd in ended:
                os.close(fd)

    def _watch(self, ended: list[int], last: float) -> int | None:
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
                os.close(self.fd)
                self._remove_scratch()
                code = os.waitstatus_to_exitcode(status)
                return code if code >= 0 else 128 - code  # killed by a signal: as shells say
            self._forward(now)
            silent = now - self.beat
            if silent >= STUCK_GRACE and now >= self.look:
                self.look = now + _LOOK
                stuck = self._stuck(now, STUCK_GRACE)
                if stuck is not None:
                    return self._abandon(*stuck, now)
            if not self.told and silent >= self.stuck_after:
                self._tell()
            if self.first is not None and now - self.first[1] >= GRACE and self._silent():
                return self._end_stuck(now)

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

    def _stuck(self, now: float, grace: float) -> tuple[Mark, CaseReport] | None:
        """The grade the silent run's running thread marked, when it has run `grace` seconds
        past its timeout and its case has not finished, with that case's report; else None."""
        threads = running(self.pid)
        marks = [mark for mark in self.marks.read() if mark.thread in threads]
        for mark in sorted(marks, key=lambda mark: mark.started):
            if now - mark.started < mark.seconds + grace or mark in self.passed_over:
                continue
            report = None if self._finished(mark) else stuck_case(self.suite, mark, self.max_text)
            if report is not None:
                return mark, report
            self.passed_over.add(mark)  # not a grade in progress: looked at once
        return None

    def _finished(self, mark: Mark) -> bool:
        """Whether the case of `mark` has reached the scratch file or the log (a thread's
        mark stays once its grade has ended)."""
        paths = [self.scratch, *([self.log] if self.log else [])]
        return any(
            hash(name) == mark.name_hash and attempt == mark.attempt
            for path in paths
            for (name, attempt), _ in logged(path)
        )

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

    def _gather(self, stuck: CaseReport | None) -> None:
        """After the run was killed: its finished cases (and `stuck`) into the log."""
        os.close(self.fd)
        written_part(self.scratch)
        if self.log is None:
            self.log = self.args.resume or self.scratch
        gather(self.scratch, self.log, stuck)
        if self.log != self.scratch:
            with contextlib.suppress(OSError):
                os.unlink(self.scratch)

    def _abandon(self, mark: Mark, stuck: CaseReport, now: float) -> int | None:
        self._kill()
        self._gather(stuck)
        result = stuck.turns[0].results[0].result
        start = "\n" if sys.stderr.isatty() else ""  # off the progress bar's line
        goes_on = (
            "the run goes on with the cases left"
            if self.first is None
            else "its reports hold the cases that finished"
        )
        print(
            f"{start}gradekit: case '{escaped(stuck.name)}': grader '{escaped(result.name)}' "
            f"has run {now - mark.started:.0f} s, past its timeout of {mark.seconds:g} s, "
            "holding the interpreter's lock (GIL) in C code: the run's process was ended, the case "
            f"is reported timed out, and {goes_on} (give such a grader `isolation: process`)",
            file=sys.stderr,
            flush=True,
        )
        if self.first is not None:  # stopped: the run ends here
            return self.end_with_reports(self.first[0])
        return None

    def _end_stuck(self, now: float) -> int:
        assert self.first is not None
        signum = self.first[0]
        found = self._stuck(now, 0.0)  # a grade past its timeout: recorded timed out
        self._kill()
        self._gather(None if found is None else found[1])
        name = signal.Signals(signum).name
        print(
            f"gradekit: {name}: the run did not act on it for {GRACE:.0f} s: "
            f"{self._which()} is stuck in C code holding the interpreter's lock (GIL); the "
            "run was ended, its reports hold the cases that finished (give such a grader "
            "`isolation: process`)",
            file=sys.stderr,
            flush=True,
        )
        return self.end_with_reports(signum)

    def end_with_reports(self, signum: int | None) -> int:
        """Once the run was killed (by `signum`, or when it could not go on): write its
        reports from the cases gathered; the exit code."""

        def at_once(again: int, frame: object) -> None:
            self._remove_scratch()
            real_exit(128 + (signum or again))

        for stopping in _STOPPING:  # a second signal now ends the parent at once
            signal.signal(stopping, at_once)
        ended = 1 if signum is None else 128 + signum
        try:
            if not self.reports or self.log is None:  # no report was asked
                return ended
            self.args.reports_only = self.log
            code = self.run(self.args)
        finally:
            self._remove_scratch()
        return ended if code != 2 else code

    def _remove_scratch(self) -> None:
        for path in {self.scratch, self.log if not self.args.resume else None}:
            if path:
                with contextlib.suppress(OSError):
                    os.unlink(path)
