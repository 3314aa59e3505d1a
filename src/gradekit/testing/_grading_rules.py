"""The contract's rules about grading: each a `prepare(subject, grader)` giving the state its
check needs (NotApplicable for an ability the grader lacks, Broken for a failure found before
any sample), and a `check(state, example)` returning what is wrong, or None.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

import attrs

from gradekit._types import CANCEL_GRACE, error_text
from gradekit.registry.abilities import blocking_grade_of
from gradekit.testing import _compare
from gradekit.testing._audit import watching
from gradekit.testing._subject import Broken, NotApplicable, Subject
from gradekit.testing._violation import show

__all__ = [
    "agrade_agrees",
    "agrade_state",
    "blocking_agrees",
    "blocking_state",
    "deterministic",
    "deterministic_state",
    "inline_pure",
    "inline_state",
    "leaves_sample",
    "pickled_state",
    "pickles",
    "the_grader",
    "well_formed",
]


def the_grader(subject: Subject, grader: Any) -> Any:
    """The state of the rules that need only the grader."""
    return grader


def well_formed(grader: Any, sample: Any) -> str | None:
    """`grade` returns a well-formed result of this kind and name, and never raises."""
    graded = _compare.grade(grader.grade, sample)
    if graded.raised is not None:
        return graded.raised
    return _compare.result_problem(graded.value, grader.kind, grader.name)


def _disagreement(first: _compare.Graded, second: _compare.Graded) -> str | None:
    if first.raised is not None or second.raised is not None:
        if first.raised == second.raised:
            return None
        return f"{first.raised or 'a result'} then {second.raised or 'a result'}"
    return _compare.difference(first.value, second.value)


def deterministic_state(subject: Subject, grader: Any) -> Any:
    """The subject and grader, unless the grader is declared not deterministic."""
    if not subject.is_deterministic(grader):
        raise NotApplicable("the grader is declared not deterministic")
    return subject, grader


def deterministic(state: tuple[Subject, Any], sample: Any) -> str | None:
    """The same sample gets the same result twice, and from a new grader."""
    subject, grader = state
    first = _compare.grade(grader.grade, sample)
    again = _compare.grade(grader.grade, sample)
    found = _disagreement(first, again)
    if found is not None:
        return f"grading the same sample twice gave {found}"
    fresh = _compare.grade(subject.create().grade, sample)
    found = _disagreement(first, fresh)
    if found is not None:
        return f"the grader and a new one with the same config gave {found}"
    return None


def leaves_sample(grader: Any, sample: Any) -> str | None:
    """Grading leaves every field of the sample as it was."""
    fields = [field.name for field in attrs.fields(type(sample))]
    before = {name: _compare.snapshot(getattr(sample, name)) for name in fields}
    shown = {name: show(getattr(sample, name)) for name in fields}
    _compare.grade(grader.grade, sample)
    changed = [name for name in fields if _compare.snapshot(getattr(sample, name)) != before[name]]
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
    return _agrees_with_grade(
        grader, sample, _compare.agrade(grader, sample), "agrade", deterministic
    )


def _agrees_with_grade(
    grader: Any, sample: Any, other: _compare.Graded, what: str, deterministic: bool
) -> str | None:
    """What is wrong with `other`, the result of another way (`what`) of grading `sample`:
    not well-formed, or (when the grader is deterministic) not `grade`'s; or None."""
    if other.raised is not None:
        return other.raised
    problem = _compare.result_problem(other.value, grader.kind, grader.name)
    if problem is not None:
        return f"{what} {problem}"
    if deterministic:
        found = _disagreement(_compare.grade(grader.grade, sample), other)
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
    graded = _compare.grade(lambda s: blocking(s, threading.Event()), sample, "grade_blocking")
    found = _agrees_with_grade(grader, sample, graded, "grade_blocking", deterministic)
    if found is not None:
        return found
    cancel = threading.Event()
    cancel.set()
    # The runner abandons a grade that takes longer than CANCEL_GRACE once cancelled.
    cancelled = _compare.within(
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
    first = _compare.grade(grader.grade, sample)  # also imports whatever it imports lazily
    _compare.grade(grader.grade, other)
    with watching() as seen:
        again = _compare.grade(grader.grade, sample)
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
    copied = _compare.grade(copy.grade, sample)
    if not deterministic:
        if copied.raised is not None:
            return f"the unpickled grader: {copied.raised}"
        return _compare.result_problem(copied.value, grader.kind, grader.name)
    found = _disagreement(_compare.grade(grader.grade, sample), copied)
    return None if found is None else f"the grader and its unpickled copy gave {found}"
