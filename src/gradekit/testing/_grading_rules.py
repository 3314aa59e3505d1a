"""The contract's rules about grading: each a `prepare(subject, grader)` giving the state its
check needs (NotApplicable for an ability the grader lacks, Broken for a failure found before
any sample), and a `check(state, example)` returning what is wrong, or None.

Also what those checks look at, small pure helpers so each rule reads as the sentence it
checks: a grade's outcome (`grade`, `agrade`, `within`), a result's shape (`result_problem`),
two results (`difference`), a sample's state (`snapshot`); and `watching()`, which records the
audit events (PEP 578) that mean I/O while its block runs, in this thread only. An inline
grader runs on the runner's own thread, in batches: a file, socket or child process opened
there stalls every grade in the batch, and is a side effect the runner does not expect when it
grades the same sample again. The audit hook is added once per process and cannot be removed
(Python offers no way); outside a `watching()` block it returns at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import pickle
import sys
import sysconfig
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import attrs

from gradekit.core.types import CANCEL_GRACE, GradeResult, Sample, error_text
from gradekit.core.values import json_problem
from gradekit.registry.registry import blocking_grade_of
from gradekit.testing._subject import Broken, NotApplicable, Subject, show

__all__ = [
    "Graded",
    "agrade",
    "agrade_agrees",
    "agrade_state",
    "blocking_agrees",
    "blocking_state",
    "deterministic",
    "deterministic_state",
    "difference",
    "grade",
    "inline_pure",
    "inline_state",
    "leaves_sample",
    "pickled_state",
    "pickles",
    "result_problem",
    "snapshot",
    "source_line",
    "the_grader",
    "watching",
    "well_formed",
    "within",
]


# Events that mean the call reached outside the process (or its file system).
_IO_EVENTS: Final = frozenset(
    {
        "open",
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.system",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.startfile",
        "shutil.rmtree",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.getaddrinfo",
        "subprocess.Popen",
        "urllib.Request",
        "ctypes.dlopen",
    }
)
# Reading Python's own modules is an import, not the grader's I/O.
_MODULE_SUFFIXES: Final = (".py", ".pyc", ".so", ".pyd", ".pth")

_local = threading.local()
_install_lock = threading.Lock()
_installed: list[bool] = []  # one True once the hook is added


def _hook(event: str, args: tuple[Any, ...]) -> None:
    seen: list[str] | None = getattr(_local, "seen", None)
    if seen is None or event not in _IO_EVENTS:
        return
    if event == "open" and args and str(args[0]).endswith(_MODULE_SUFFIXES):
        return
    shown = ", ".join(repr(arg) for arg in args[:2])
    seen.append(f"{event}({shown:.160})")


def _install() -> None:
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed.append(True)


@contextlib.contextmanager
def watching() -> Iterator[list[str]]:
    """Record, in the yielded list, every I/O audit event raised in this thread meanwhile."""
    _install()
    seen: list[str] = []
    previous = getattr(_local, "seen", None)
    _local.seen = seen
    try:
        yield seen
    finally:
        _local.seen = previous


@attrs.frozen
class Graded:
    """What one call of `grade` (or `agrade`) gave: a value, or the exception it raised."""

    value: Any = None
    raised: str | None = None


_GRADEKIT: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""gradekit's own package folder: its frames are not where a pack went wrong."""

_STDLIB: Final = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def _home(owner: Any) -> str | None:
    """The source of the package (or single module) `owner`'s class comes from, if known."""
    named = owner if isinstance(owner, type) else type(owner)
    module = sys.modules.get(named.__module__.split(".")[0])
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return None
    path = os.path.abspath(path)
    return os.path.dirname(path) if os.path.basename(path) == "__init__.py" else path


def _inside(path: str, home: str) -> bool:
    return path == home or path.startswith(home + os.sep)


def source_line(error: BaseException, owner: Any = None) -> str:
    """Where `error` was raised, as the pack's author reads it: the innermost frame in the
    package of `owner` (the grader); else the innermost frame outside gradekit and the
    standard library (a result gradekit refused is the pack's line that built it); else the
    innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    home = None if owner is None else _home(owner)
    paths = [os.path.abspath(frame.filename) for frame in frames]
    theirs = [
        i
        for i, path in enumerate(paths)
        if not any(_inside(path, h) for h in (_GRADEKIT, *_STDLIB))
    ]
    own = [i for i in theirs if home is not None and _inside(paths[i], home)]
    frame = frames[(own or theirs or [len(frames) - 1])[-1]]
    return f" (at {frame.filename}:{frame.lineno} in {frame.name})"


def _raised(what: str, error: BaseException, owner: Any = None) -> str:
    return f"{what} raised {error_text(error)}{source_line(error, owner)}"


def grade(call: Callable[[Sample], Any], sample: Sample, what: str = "grade") -> Graded:
    """Call `call(sample)`, catching what a grader may raise (SystemExit included)."""
    try:
        return Graded(call(sample))
    except (Exception, SystemExit) as error:
        return Graded(raised=_raised(what, error, getattr(call, "__self__", None)))


def within(
    call: Callable[[Sample], Any], sample: Sample, seconds: float, what: str
) -> Graded | None:
    """`grade(call, sample, what)` in a daemon thread: what it gave, or None when it did not
    return within `seconds` (the thread is left behind)."""
    outcome: list[Graded] = []
    thread = threading.Thread(
        target=lambda: outcome.append(grade(call, sample, what)), daemon=True, name=what
    )
    thread.start()
    thread.join(seconds)
    return outcome[0] if outcome else None


def agrade(grader: Any, sample: Sample) -> Graded:
    """Run `grader.agrade(sample)` to completion on a fresh event loop."""
    try:
        return Graded(asyncio.run(grader.agrade(sample)))
    except (Exception, SystemExit) as error:
        return Graded(raised=_raised("agrade", error, grader))


def result_problem(value: Any, kind: str, name: str) -> str | None:
    """None for a well-formed result of this kind and name; else what is wrong with it."""
    if not isinstance(value, GradeResult):
        return f"returned {type(value).__name__} {value!r:.80}, not a GradeResult"
    if value.kind != kind:
        return f"returned a result of kind {value.kind!r}, not {kind!r}"
    if value.name != name:
        return f"returned a result named {value.name!r}, not the grader's name {name!r}"
    if type(value.passed) is not bool:
        return f"returned passed={value.passed!r} ({type(value.passed).__name__}), not a bool"
    score = value.score
    if type(score) is not float or not math.isfinite(score) or not 0.0 <= score <= 1.0:
        return f"returned score={score!r}, not a finite float in [0, 1]"
    if not isinstance(value.message, str):
        return f"returned message={value.message!r}, not a string"
    if value.error is not None:
        if not isinstance(value.error, str):
            return f"returned error={value.error!r}, not a string"
        if value.passed or value.score != 0.0:
            return "returned an error with passed=True or a non-zero score"
    if value.details is not None:
        if not isinstance(value.details, Mapping):
            return f"returned details={value.details!r:.80}, not a mapping"
        problem = json_problem(value.details)
        if problem is not None:
            return f"returned details that are not strict JSON: {problem[1]}"
    return None


def _untimed(value: Any) -> Any:
    # Timings differ from one grade to the next by nature: a composite's children results in
    # details carry their own `duration_ms`, like the result itself.
    if isinstance(value, Mapping):
        return {key: _untimed(item) for key, item in value.items() if key != "duration_ms"}
    if isinstance(value, (list, tuple)):
        return [_untimed(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


_COMPARED = ("kind", "name", "passed", "score", "message", "error", "details")


def difference(first: Any, second: Any) -> str | None:
    """None when two results agree (timings aside); else the first field that differs."""
    if not (isinstance(first, GradeResult) and isinstance(second, GradeResult)):
        return None if _same(first, second) else f"{first!r:.120} then {second!r:.120}"
    for field in _COMPARED:
        one, other = _untimed(getattr(first, field)), _untimed(getattr(second, field))
        if not _same(one, other):
            return f"{field} {one!r:.120} then {other!r:.120}"
    return None


def _same(one: Any, other: Any) -> bool:
    try:
        return bool(one == other)
    except Exception:  # a value whose == is item by item (a numpy array): by structure
        return bool(snapshot(one) == snapshot(other))


def snapshot(value: Any) -> Any:
    """A structural copy of `value` to compare before and after grading: every attrs field,
    mapping item, sequence item and instance attribute, whatever the object's own `==`."""
    return _snap(value, set())


def _snap(value: Any, active: set[int]) -> Any:
    kind = type(value)
    if value is None or kind in (str, int, bool, bytes):
        return value
    if kind is float:
        return ("float", value.hex())
    if id(value) in active:
        return ("cycle", kind.__qualname__)
    active.add(id(value))
    try:
        if attrs.has(kind):
            fields = attrs.fields(kind)
            return (kind.__qualname__, tuple(_snap(getattr(value, f.name), active) for f in fields))
        if isinstance(value, Mapping):
            items = tuple((_snap(k, active), _snap(v, active)) for k, v in value.items())
            return (kind.__qualname__, items)
        if isinstance(value, (list, tuple, bytearray)):
            return (kind.__qualname__, tuple(_snap(item, active) for item in value))
        if isinstance(value, (set, frozenset)):
            return (kind.__qualname__, tuple(sorted(repr(_snap(i, active)) for i in value)))
        state = getattr(value, "__dict__", None)
        if isinstance(state, dict):
            return (kind.__qualname__, _snap(state, active))
        return (kind.__qualname__, repr(value))
    finally:
        active.discard(id(value))


def the_grader(subject: Subject, grader: Any) -> Any:
    """The state of the rules that need only the grader."""
    return grader


def well_formed(grader: Any, sample: Any) -> str | None:
    """`grade` returns a well-formed result of this kind and name, and never raises."""
    graded = grade(grader.grade, sample)
    if graded.raised is not None:
        return graded.raised
    return result_problem(graded.value, grader.kind, grader.name)


def _disagreement(first: Graded, second: Graded) -> str | None:
    if first.raised is not None or second.raised is not None:
        if first.raised == second.raised:
            return None
        return f"{first.raised or 'a result'} then {second.raised or 'a result'}"
    return difference(first.value, second.value)


def deterministic_state(subject: Subject, grader: Any) -> Any:
    """The subject and grader, unless the grader is declared not deterministic."""
    if not subject.is_deterministic(grader):
        raise NotApplicable("the grader is declared not deterministic")
    return subject, grader


def deterministic(state: tuple[Subject, Any], sample: Any) -> str | None:
    """The same sample gets the same result twice, and from a new grader."""
    subject, grader = state
    first = grade(grader.grade, sample)
    again = grade(grader.grade, sample)
    found = _disagreement(first, again)
    if found is not None:
        return f"grading the same sample twice gave {found}"
    fresh = grade(subject.create().grade, sample)
    found = _disagreement(first, fresh)
    if found is not None:
        return f"the grader and a new one with the same config gave {found}"
    return None


def leaves_sample(grader: Any, sample: Any) -> str | None:
    """Grading leaves every field of the sample as it was."""
    fields = [field.name for field in attrs.fields(type(sample))]
    before = {name: snapshot(getattr(sample, name)) for name in fields}
    shown = {name: show(getattr(sample, name)) for name in fields}
    grade(grader.grade, sample)
    changed = [name for name in fields if snapshot(getattr(sample, name)) != before[name]]
    if not changed:
        return None
    name = changed[0]
    return (
        f"grading changed the sample's {name}: it was {shown[name]}, it is now "
        f"{show(getattr(sample, name))}; graders must leave samples as they are"
    )


def agrade_state(subject: Subject, grader: Any) -> Any:
    """The grader and whether it is deterministic, when it has an `agrade`."""
    try:
        method = grader.agrade
    except AttributeError:
        method = None
    if not callable(method):
        raise NotApplicable("the grader has no agrade")
    return grader, subject.is_deterministic(grader)


def agrade_agrees(state: tuple[Any, bool], sample: Any) -> str | None:
    """`agrade` returns a well-formed result, equal to `grade`'s when deterministic."""
    grader, deterministic = state
    return _agrees_with_grade(grader, sample, agrade(grader, sample), "agrade", deterministic)


def _agrees_with_grade(
    grader: Any, sample: Any, other: Graded, what: str, deterministic: bool
) -> str | None:
    """What is wrong with `other`, the result of another way (`what`) of grading `sample`:
    not well-formed, or (when the grader is deterministic) not `grade`'s; or None."""
    if other.raised is not None:
        return other.raised
    problem = result_problem(other.value, grader.kind, grader.name)
    if problem is not None:
        return f"{what} {problem}"
    if deterministic:
        found = _disagreement(grade(grader.grade, sample), other)
        if found is not None:
            return f"grade and {what} disagree: {found}"
    return None


def blocking_state(subject: Subject, grader: Any) -> Any:
    """The grader's `grade_blocking`, its kind and name, and whether it is deterministic,
    when it has one."""
    blocking = blocking_grade_of(grader)
    if blocking is None:
        raise NotApplicable("the grader has no grade_blocking")
    return blocking, grader, subject.is_deterministic(grader)


def blocking_agrees(state: tuple[Any, Any, bool], sample: Any) -> str | None:
    """`grade_blocking` returns a well-formed result, equal to `grade`'s when deterministic,
    and returns one soon when its `cancel` is set (the runner's timeout)."""
    blocking, grader, deterministic = state
    graded = grade(lambda s: blocking(s, threading.Event()), sample, "grade_blocking")
    found = _agrees_with_grade(grader, sample, graded, "grade_blocking", deterministic)
    if found is not None:
        return found
    cancel = threading.Event()
    cancel.set()
    # The runner abandons a grade that takes longer than CANCEL_GRACE once cancelled.
    cancelled = within(
        lambda s: blocking(s, cancel), sample, CANCEL_GRACE, "grade_blocking (cancel set)"
    )
    if cancelled is None:
        return (
            f"grade_blocking did not return within {CANCEL_GRACE:g} s of its cancel being set: "
            "once cancel is set it must stop its work (kill its command) and return a result"
        )
    # Once cancelled, a result need not be grade's: only well formed.
    return _agrees_with_grade(grader, sample, cancelled, "grade_blocking, cancelled,", False)


def inline_state(subject: Subject, grader: Any) -> Any:
    """The grader, when it is marked inline."""
    if getattr(grader, "inline", False) is not True:
        raise NotApplicable("the grader is not marked inline")
    return grader


def inline_pure(grader: Any, pair: tuple[Any, Any]) -> str | None:
    """An inline grader does no I/O and grades a sample alike after grading another."""
    sample, other = pair
    first = grade(grader.grade, sample)  # also imports whatever it imports lazily
    grade(grader.grade, other)
    with watching() as seen:
        again = grade(grader.grade, sample)
    if seen:
        return f"an inline grader must be pure, but grading did I/O: {'; '.join(seen[:3])}"
    found = _disagreement(first, again)
    if found is not None:
        return (
            "an inline grader must be pure, but after grading another sample the same sample "
            f"gave {found}"
        )
    return None


def pickled_state(subject: Subject, grader: Any) -> Any:
    """The grader, its unpickled copy and whether it is deterministic."""
    if not subject.is_picklable(grader):
        raise NotApplicable("the grader is declared not picklable")
    try:
        copy = pickle.loads(pickle.dumps(grader))
    except Exception as error:
        raise Broken(
            f"the grader does not pickle: {error_text(error)}; process isolation sends graders "
            "to a child process: keep only options and rebuild the rest in __reduce__, or "
            "declare picklable = False",
            subject.config,
        ) from error
    return grader, copy, subject.is_deterministic(grader)


def pickles(state: tuple[Any, Any, bool], sample: Any) -> str | None:
    """The unpickled copy grades like the original (well-formed, when not deterministic)."""
    grader, copy, deterministic = state
    copied = grade(copy.grade, sample)
    if not deterministic:
        if copied.raised is not None:
            return f"the unpickled grader: {copied.raised}"
        return result_problem(copied.value, grader.kind, grader.name)
    found = _disagreement(grade(grader.grade, sample), copied)
    return None if found is None else f"the grader and its unpickled copy gave {found}"
