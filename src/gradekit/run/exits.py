"""What a run holds of its process while it grades: its exits, its stdin and its signals.

**Exits that tell the truth**: user code cannot end gradekit's process while it grades, nor
hold it open once the reports are written.

`os._exit` ends a process at once, past every `try`, `finally` and report: a grader calling it
made `gradekit run` exit 0 with no report. While `refusing_exits()` is in effect, `os._exit`
(and `posix._exit`) is replaced: a call from the process that installed it raises
`ExitRefusedError` in the caller (a grader's error result; a thread the grader started just
ends), and is remembered for the command to tell. gradekit's own immediate exits call
`real_exit`. A forked child (a process-isolated grader's worker, multiprocessing) exits for
real: the process is not the one that installed the guard.

What no guard can catch (docs/runner.md): `_exit` called from C (an extension, `ctypes`), a
name bound before the guard (`from os import _exit` at import time of a module gradekit did
not load yet), a signal that kills the process (SIGKILL, a segfault).

`leave(code)` ends the command once its reports are written and flushed, without waiting for
non-daemon threads a grader left running.

**Graders never read gradekit's stdin**: during a run, `sys.stdin` reads from /dev/null.

A thread-isolated grader that calls `input()` then gets EOFError at once (its error result)
instead of waiting on the terminal or a pipe, and no abandoned grader thread is left blocked
in the interpreter's stdin buffer at exit (which aborts the process: "Fatal Python error:
_enter_buffered_busy"). `sys.stdin` is restored when the last run in progress returns.
Commands and process-isolated children get /dev/null as their file descriptor 0 themselves.

**Interrupts**: what a grader raises becomes its error result, KeyboardInterrupt and SystemExit
included; only the user's Ctrl-C stops a run.

A real Ctrl-C is a KeyboardInterrupt raised in the main thread by Python's SIGINT handler.
Graders run in worker threads (and process-isolated ones in children that ignore SIGINT), so
a KeyboardInterrupt anywhere else was raised by the grader itself, as was every SystemExit.

**Signals that stop a run**: Ctrl-C (SIGINT) and, for the command line, SIGTERM and SIGHUP.

While `stopping_on(...)` is in effect (main thread only), each of those signals raises
`Interrupted` (a KeyboardInterrupt, so everything that stops cleanly on Ctrl-C stops cleanly on
SIGTERM too) in the main thread, except inside a `RECORDING` block: recording a finished case
(its log line, its place in the report, its count) is one step that a signal does not cut in
two; the signal is raised when the block ends. With `exit_on_second`, a second signal during
the shutdown that the first one began ends the process at once, quietly (for a command line:
the user asked twice); child processes still registered are killed first."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import IO, Any, Final, NoReturn, TypeVar

__all__ = [
    "CURRENT_STDERR",
    "GRADER_RAISES",
    "RECORDING",
    "Interrupted",
    "Raised",
    "adopt_exits",
    "after_graders",
    "contained",
    "detach_stdin",
    "first_signal",
    "is_ctrl_c",
    "leave",
    "owning_exits",
    "real_exit",
    "refused",
    "refusing_exits",
    "settle_streams",
    "stopping_on",
]


_REAL_EXIT: Final = os._exit
_lock = threading.Lock()
_depth = 0
_owner: int | None = None
_refused: list[tuple[str, int]] = []


def real_exit(code: int) -> NoReturn:
    """`os._exit(code)`, also while `refusing_exits` is in effect: gradekit's own."""
    _REAL_EXIT(code)


def _refusing(code: int) -> NoReturn:
    if os.getpid() != _owner or _depth == 0:  # a forked child's own exit; or no run is on
        _REAL_EXIT(code)
    with _lock:
        _refused.append((threading.current_thread().name, code))
    from gradekit.core.errors import ExitRefusedError

    raise ExitRefusedError(code)


def _set(function: Any) -> None:
    os._exit = function
    with contextlib.suppress(ImportError):
        import posix

        posix._exit = function


@contextlib.contextmanager
def refusing_exits() -> Iterator[None]:
    """Refuse `os._exit` in this process until the block ends (blocks may overlap: the first
    installs the guard, the last removes it)."""
    global _depth, _owner  # noqa: PLW0603 - os._exit is process-wide
    with _lock:
        if _depth == 0:
            _owner = os.getpid()
            _set(_refusing)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _set(_REAL_EXIT)


@contextlib.contextmanager
def owning_exits() -> Iterator[None]:
    """In a forked child: refuse `os._exit` in this process (not in its parent's name) until
    the block ends; the child then ends with `real_exit`."""
    global _depth, _owner
    with _lock:
        saved = _depth, _owner
        _depth, _owner = 1, os.getpid()
        _set(_refusing)
    try:
        yield
    finally:
        with _lock:
            _depth, _owner = saved
            if _depth == 0:
                _set(_REAL_EXIT)


def adopt_exits() -> None:
    """In a forked child that goes on with its parent's command (`gradekit.cli.supervise`):
    the `refusing_exits` in effect refuses `os._exit` in this process, no longer in the
    parent's."""
    global _owner  # noqa: PLW0603
    with _lock:
        if _depth:
            _owner = os.getpid()


def refused() -> list[tuple[str, int]]:
    """Each `os._exit` refused so far: (the calling thread's name, the code asked for)."""
    with _lock:
        return list(_refused)


def _lingering() -> list[threading.Thread]:
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon and t.is_alive()]


def leave(code: int) -> int:
    """End the command with `code`. When threads that are not daemons are still running (a
    grader started them), Python would wait for them at exit, forever for a thread that never
    ends: say so, flush stdout and stderr, run the exit handlers and exit at once. Else return
    `code`, for the usual exit."""
    lingering = _lingering()
    if not lingering:
        return code
    names = ", ".join(thread.name for thread in lingering[:5])
    more = f" and {len(lingering) - 5} more" if len(lingering) > 5 else ""
    count = len(lingering)
    noun = "thread a grader started is" if count == 1 else "threads graders started are"
    _say(
        f"gradekit: {count} {noun} still running ({names}{more}); exiting without waiting "
        "for them (make them daemons, or join them before the grader returns)"
    )
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    real_exit(code)


def settle_streams() -> None:
    """Make stdout and stderr writable again when a grader closed them: a closed file
    descriptor (`os.close(1)`) is reopened on /dev/null, so what cannot be shown is dropped
    instead of raising (a traceback, exit 1 or 120 for a run whose cases passed) and no report
    file opened later takes descriptor 1 or 2; a closed `sys.stdout` or `sys.stderr` object is
    replaced by a new one on the same descriptor."""
    for fd in (1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = getattr(sys, name)
        try:
            stream.flush()
        except (OSError, ValueError):
            errors = "backslashreplace" if name == "stderr" else "strict"
            again = open(os.dup(fd), "w", 1, encoding="utf-8", errors=errors)  # noqa: SIM115
            setattr(sys, name, again)


class _CurrentStderr:
    """`sys.stderr` as it is at each use: a settled stream replaces one a grader closed."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stderr, name)


CURRENT_STDERR: Final[Any] = _CurrentStderr()
"""Whatever `sys.stderr` is when written to (for progress made before the graders ran)."""


@contextlib.contextmanager
def after_graders(folder: str) -> Iterator[None]:
    """After the block (the grading of a command), undo what a grader did to the process that
    would lose the reports or the summary: its `os.chdir` (relative report paths lead from
    `folder` again), its closing of stdout or stderr; then tell each refused `os._exit`."""
    try:
        yield
    finally:
        settle_streams()
        try:
            moved = os.getcwd() != folder
        except OSError:  # the folder a grader moved to was removed
            moved = True
        if moved:
            os.chdir(folder)
    for thread, code in refused():
        _say(
            f"gradekit: os._exit({code}) called in thread {thread!r} during the run was refused "
            "(a grader cannot end the run)"
        )


def _say(line: str) -> None:
    with contextlib.suppress(Exception):
        print(line, file=sys.stderr, flush=True)


_lock = threading.Lock()
_runs = 0
_saved: Any = None
_null: IO[str] | None = None


def detach_stdin() -> Callable[[], None]:
    """Make `sys.stdin` a /dev/null reader until the returned function is called (runs may
    overlap: the first to start swaps it, the last to end puts it back)."""
    global _runs, _saved, _null  # noqa: PLW0603 - sys.stdin is process-wide state
    with _lock:
        if _runs == 0:
            if _null is None:
                _null = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - kept for the process
            _saved, sys.stdin = sys.stdin, _null
        _runs += 1
    done = False

    def restore() -> None:
        global _runs, _saved  # noqa: PLW0603
        nonlocal done
        with _lock:
            if done:
                return
            done = True
            _runs -= 1
            if _runs == 0:
                if sys.stdin is _null:  # unless someone replaced it meanwhile
                    sys.stdin = _saved
                _saved = None

    return restore


T = TypeVar("T")

GRADER_RAISES: Final = (Exception, SystemExit, KeyboardInterrupt)
"""What a grader may raise that becomes its error result (unless `is_ctrl_c`)."""


def is_ctrl_c(error: BaseException) -> bool:
    """True for a KeyboardInterrupt that may be the user's Ctrl-C: raised in the main thread
    of a process that handles SIGINT. Re-raise it; anything else is the grader's own."""
    return (
        isinstance(error, KeyboardInterrupt)
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    )


class Raised:
    """A KeyboardInterrupt or SystemExit an async grader raised, carried out as a value: an
    event loop lets neither pass through a task, it stops the loop instead."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def contained(awaitable: Awaitable[T]) -> T | Raised:
    """Await `awaitable`; its KeyboardInterrupt or SystemExit comes back as `Raised`."""
    try:
        return await awaitable
    except (KeyboardInterrupt, SystemExit) as error:
        if is_ctrl_c(error):
            raise
        return Raised(error)


class Interrupted(KeyboardInterrupt):
    """A signal that stops the run arrived: `signum` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _State:
    def __init__(self) -> None:
        self.depth = 0  # RECORDING blocks open
        self.pending: int | None = None  # a signal that arrived inside one
        self.first: int | None = None  # the first signal since handlers were installed
        self.exit_on_second = False


_state = _State()


class _Recording:
    """`with RECORDING:`: a signal arriving inside is raised when the block ends (in the main
    thread, where signals are handled; elsewhere the block changes nothing)."""

    def __enter__(self) -> None:
        if threading.get_ident() == _MAIN:
            _state.depth += 1

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if threading.get_ident() != _MAIN:
            return
        _state.depth -= 1
        pending = _state.pending
        if pending is not None and _state.depth == 0:
            _state.pending = None
            if kind is None:  # else what ended the block stops the run already
                raise Interrupted(pending)


_MAIN = threading.main_thread().ident


RECORDING = _Recording()


def first_signal() -> int | None:
    """The first stopping signal received while `stopping_on` is in effect, if any."""
    return _state.first


def _handler(signum: int, frame: FrameType | None) -> None:
    if _state.first is not None and _state.exit_on_second:
        # No import in a signal handler: children are registered only by process.commands,
        # so when it was never loaded there are none to kill.
        commands = sys.modules.get("gradekit.process.commands")
        if commands is not None:
            commands.kill_children()
        with contextlib.suppress(OSError):
            os.write(2, b"gradekit: stopped at once (second interrupt)\n")
        real_exit(128 + _state.first)
    if _state.first is None:
        _state.first = signum
    if _state.depth:
        _state.pending = signum
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def stopping_on(
    *signals: signal.Signals, exit_on_second: bool = False, only_if_default: bool = False
) -> Iterator[None]:
    """Make `signals` stop the run (see the module) while the block runs; the previous
    handlers come back after. Outside the main thread, or with `only_if_default` when a
    handler other than Python's default is in place (a caller chose its own), nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if only_if_default and any(not _is_default(s) for s in signals):
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in signals}
    outer = (_state.first, _state.exit_on_second)
    _state.first, _state.exit_on_second = None, exit_on_second
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _state.first, _state.exit_on_second = outer


def _is_default(signum: signal.Signals) -> bool:
    handler = signal.getsignal(signum)
    return handler is signal.default_int_handler or handler == signal.SIG_DFL
