"""The marks a built-in kind's `grade` method carries: promises the runner relies on.

`well_formed`: the method's results need no checking again; `bounded`: the method always ends,
in time its sample bounds. Each mark is an attribute on the function itself, so a subclass that
overrides `grade` carries no mark until it says so. `gradekit.registry.abilities` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

__all__ = ["bounded", "is_bounded", "is_well_formed", "well_formed"]

GradeFunction = TypeVar("GradeFunction", bound=Callable[..., Any])

_WELL_FORMED: Final = "_gradekit_well_formed"


def well_formed(grade: GradeFunction) -> GradeFunction:
    """Mark a `grade` method that always returns a well-formed result: exactly a `GradeResult`,
    `passed` a bool, details strict JSON (strings, lists of strings), and its grader's `kind`
    and `name`. The batch runner then accepts such results without checking them again.

    The mark is on this function only: a subclass that overrides `grade` is checked again.
    For built-in kinds, whose promise a property test holds them to.
    """
    setattr(grade, _WELL_FORMED, True)
    return grade


def is_well_formed(grade: Callable[..., Any]) -> bool:
    """True when `grade` (a function or bound method) is marked by `well_formed`."""
    return getattr(grade, _WELL_FORMED, False) is True


_BOUNDED: Final = "_gradekit_bounded"


def bounded(grade: GradeFunction) -> GradeFunction:
    """Mark a `grade` method that always ends, in time bounded by its sample: pure Python or C
    work on the sample, no I/O, no waiting, no loop that the sample does not bound. The runner
    may then grade it where no other thread could abandon it (an inline batch graded in the
    event loop's own thread while nothing else is in flight): its timeout still holds, judged
    when it returns, as the batch does for a grade that held the GIL.

    The mark is on this function only, as `well_formed`'s. For built-in kinds."""
    setattr(grade, _BOUNDED, True)
    return grade


def is_bounded(grade: Callable[..., Any]) -> bool:
    """True when `grade` (a function or bound method) is marked by `bounded`."""
    return getattr(grade, _BOUNDED, False) is True
