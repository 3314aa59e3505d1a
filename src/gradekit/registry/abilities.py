"""The optional abilities of graders and factories, detected in one place.

Each ability is a small protocol declared beside `Grader` in `gradekit.core.types`: `AsyncGrader`
(`async def agrade`), `InlineGrader` (`inline = True`), `BlockingGrader` (`grade_blocking`),
`well_formed` results, `bounded` grades, and `DeclaresOptions` (a factory's
`options_class`, and `options_complete` when that class declares every option). The runner,
the composite kinds, the registry and the schema ask these functions, never the attributes
themselves, so each rule reads the same everywhere. What the runner decides
from them (which entries are inline, which blocking) is the runner's: `gradekit.run.dispatch`.

Imports only the core types (the registry imports this module): an entry is what
`gradekit.registry.entries.GraderEntry` provides, read through the `Entry` protocol.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeGuard

import attrs

from gradekit.core.types import Grader, Sample, is_bounded, is_well_formed

__all__ = [
    "Entry",
    "agrade_of",
    "blocking_grade_of",
    "declares_every_option",
    "declares_inline",
    "has_well_formed_results",
    "is_async",
    "is_bounded_entry",
    "is_grader",
    "options_class_of",
]


_GRADER_TYPES: dict[type, bool] = {}


def is_grader(value: object) -> TypeGuard[Grader]:
    """True when `value` is a grader: it has `kind`, `name` and `grade` (the `Grader`
    protocol). Asked once per type: a protocol's `isinstance` costs tens of microseconds
    before Python 3.12, more than a whole grade of a text kind."""
    known = _GRADER_TYPES.get(type(value))
    if known is None:
        known = _GRADER_TYPES[type(value)] = isinstance(value, Grader)
    return known


def agrade_of(grader: Grader) -> Callable[[Sample], Awaitable[Any]] | None:
    """The grader's `agrade`, or None when it has none (it is then graded with `grade`)."""
    agrade: Callable[[Sample], Awaitable[Any]] | None = getattr(grader, "agrade", None)
    return agrade


def blocking_grade_of(grader: Grader) -> Callable[[Sample, Any], Any] | None:
    """The grader's `grade_blocking(sample, cancel)` (`BlockingGrader`), or None."""
    blocking = getattr(grader, "grade_blocking", None)
    return blocking if callable(blocking) else None


def is_async(grader: Grader) -> bool:
    """True for a grader that can be awaited (`AsyncGrader`): the runner prefers `agrade`."""
    return agrade_of(grader) is not None


def declares_inline(grader: Grader) -> bool:
    """True for a grader whose class says it is pure, CPU-only and always fast
    (`InlineGrader`: `inline = True`, exactly True)."""
    return getattr(grader, "inline", False) is True


def sandboxes_itself(grader: Grader) -> bool:
    """True for a grader whose grades run their commands in a process and sandbox of their
    own (`program`, `build`, `lint`: `sandboxes_itself = True`, exactly True). The runner
    grades it in its own process whatever `isolation` says: a process-isolated worker keeps
    gradekit's environment and shows the suite's files, and a command run inside it (where
    bubblewrap cannot nest) would see both."""
    return getattr(grader, "sandboxes_itself", False) is True


class Entry(Protocol):
    """What these rules read of a grader entry (`GraderEntry`)."""

    @property
    def grader(self) -> Grader:
        """The entry's grader."""
        ...

    @property
    def kind(self) -> str:
        """The kind the entry names."""
        ...

    @property
    def name(self) -> str:
        """The entry's name, which its results carry."""
        ...

    @property
    def timeout(self) -> float | None:
        """The entry's own timeout, if it sets one."""
        ...

    @property
    def isolation(self) -> str | None:
        """The entry's own isolation, if it sets one."""
        ...


def is_bounded_entry(entry: Entry) -> bool:
    """True when the entry's grade always ends in time bounded by its sample: its grader's
    `grade` is marked `bounded` (see `gradekit.core.types.bounded`)."""
    return is_bounded(entry.grader.grade)


def has_well_formed_results(entry: Entry) -> bool:
    """True when the entry's results need no check but its threshold: its grader's `grade`
    is marked `well_formed` and the entry keeps the grader's kind and name."""
    grader = entry.grader
    return is_well_formed(grader.grade) and entry.kind == grader.kind and entry.name == grader.name


def options_class_of(factory: Any) -> type | None:
    """The attrs class whose fields are a kind's options: the factory itself when it is one,
    else the `options_class` it declares (`DeclaresOptions`), else None."""
    if isinstance(factory, type) and attrs.has(factory):
        return factory
    options = getattr(factory, "options_class", None)
    return options if isinstance(options, type) and attrs.has(options) else None


def declares_every_option(factory: Any) -> bool:
    """True when the kind takes no option its options class does not declare: the factory is
    that attrs class, or it declares `options_complete = True` beside its `options_class`."""
    if isinstance(factory, type) and attrs.has(factory):
        return True
    return (
        options_class_of(factory) is not None
        and getattr(factory, "options_complete", False) is True
    )
