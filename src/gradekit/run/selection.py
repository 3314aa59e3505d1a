"""Which cases of a suite a run grades: `run_suite(suite, select=...)`, `--filter GLOB`.

A `Selection` is a test on a case plus the words that describe it, so that a selection that
matches nothing can be reported in the terms the user wrote. Selections combine with `&`, `|`
and `~`; name globs (`Selection.names`) and selection expressions over tags, grader kinds and
names (`Selection.expression`, what `--select` takes) build them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from typing import TypeAlias

from gradekit.suite.model import Case

__all__ = ["Select", "Selection", "as_selection"]


class Selection:
    """A test on each case (`selection(case) -> bool`) and how to say it (`description`).

    `hint` is what to check when the selection matches no case of a suite.
    """

    __slots__ = ("_test", "description", "hint")

    def __init__(
        self,
        test: Callable[[Case], bool],
        description: str = "the selection",
        hint: str = "check the selection",
    ) -> None:
        self._test = test
        self.description = description
        self.hint = hint

    @classmethod
    def names(cls, *globs: str, description: str | None = None) -> Selection:
        """The cases whose name matches any of `globs` (`*`, `?`, `[abc]`; case-sensitive)."""
        patterns = tuple(globs)
        if not patterns:
            raise ValueError("Selection.names needs at least one glob, such as 'growth-*'")
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise TypeError(f"a name glob is a str, got {type(pattern).__name__}")
        if len(patterns) == 1:
            pattern = patterns[0]

            def test(case: Case) -> bool:
                return fnmatchcase(case.name, pattern)
        else:

            def test(case: Case) -> bool:
                return any(fnmatchcase(case.name, p) for p in patterns)

        said = "name " + " or ".join(repr(p) for p in patterns)
        return cls(test, description or said, "check the pattern (a glob such as 'growth-*')")

    @classmethod
    def expression(cls, text: str, *, description: str | None = None) -> Selection:
        """The cases a selection expression picks (`tag:smoke and not tag:slow`, `grader:KIND`,
        name globs; see `gradekit.suite.selection`). `grader:X` matches a case when any entry
        of any of its turns has kind or name X. A syntax error is a ConfigError naming the
        column."""
        from gradekit.suite.selection import CaseFacts, parse_selection

        if not isinstance(text, str):
            raise TypeError(f"a selection expression is a str, got {type(text).__name__}")
        selector = parse_selection(text)
        asks_graders = "grader:" in text  # else a case's entries need not be gathered

        def test(case: Case) -> bool:
            graders = frozenset(
                word
                for turn in (case.turns if asks_graders else ())
                for entry in turn.graders
                for word in (entry.kind, entry.name)
            )
            return selector(CaseFacts(case.name, frozenset(case.tags), graders))

        hint = "check the expression (tag:NAME, grader:KIND, name globs such as 'growth-*')"
        return cls(test, description or f"the selection {text!r}", hint)

    def __call__(self, case: Case) -> bool:
        return bool(self._test(case))

    def __and__(self, other: Selection) -> Selection:
        first, second = self._test, other._test
        return Selection(
            lambda case: first(case) and second(case),
            f"{self.description} and {other.description}",
            _hints(self, other),
        )

    def __or__(self, other: Selection) -> Selection:
        first, second = self._test, other._test
        return Selection(
            lambda case: first(case) or second(case),
            f"{self.description} or {other.description}",
            _hints(self, other),
        )

    def __invert__(self) -> Selection:
        test = self._test
        return Selection(lambda case: not test(case), f"not ({self.description})")

    def __repr__(self) -> str:
        return f"Selection({self.description})"


def _hints(first: Selection, second: Selection) -> str:
    """What to check when two selections combined match nothing."""
    return first.hint if first.hint == second.hint else f"{first.hint}; {second.hint}"


Select: TypeAlias = Selection | Callable[[Case], bool] | str | Iterable[str]
"""What `run_suite(select=...)` takes: a Selection, a function of a case, a name glob, or
several globs (a case matching any is graded)."""


def as_selection(value: Select | None) -> Selection | None:
    """The Selection `value` stands for (None: every case)."""
    if value is None or isinstance(value, Selection):
        return value
    if isinstance(value, str):
        return Selection.names(value)
    if callable(value):
        name = getattr(value, "__name__", None) or type(value).__name__
        return Selection(value, f"the selection {name}()")
    if isinstance(value, Iterable):
        globs = list(value)
        if not globs:
            raise ValueError("select= got no globs; give at least one, or None for every case")
        return Selection.names(*globs)
    raise TypeError(
        f"select must be a Selection, a function of a case, or name globs, got "
        f"{type(value).__name__}"
    )
