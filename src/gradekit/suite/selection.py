"""Which cases of a suite a run grades: `Selection` (what `run_suite(select=...)` and
`--filter GLOB` build), and the selection expressions `--select` takes.

A `Selection` is a test on a case plus the words that describe it, so that a selection that
matches nothing can be reported in the terms the user wrote. Selections combine with `&`, `|`
and `~`; name globs (`Selection.names`) and selection expressions (`Selection.expression`)
build them. Selection expressions:

    tag:smoke and not tag:slow
    growth-* or name:"fin qa/*"
    grader:numeric and (tag:nightly or tag:smoke)

An atom is `tag:NAME` (the case carries that tag), `grader:KIND` (some grader of the case is of
that kind or has that name), `name:GLOB` or a bare GLOB (the case name matches, `*` `?` `[...]`
as in shell globs, case-sensitive). Atoms combine with `not`, `and`, `or` (binding in that
order, tightest first) and parentheses; a value with spaces or parentheses is quoted ("...").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from typing import Final, TypeAlias

import attrs

from gradekit.core.errors import ConfigError
from gradekit.suite.model import Case

__all__ = ["CaseFacts", "Select", "Selection", "Selector", "as_selection", "parse_selection"]


@attrs.frozen
class CaseFacts:
    """What a selection can ask of a case: its name, its tags, its graders' kinds and names."""

    name: str
    tags: frozenset[str] = frozenset()
    graders: frozenset[str] = frozenset()


Selector = Callable[[CaseFacts], bool]
"""A parsed selection: true for the cases to grade."""

_TOKEN: Final = re.compile(
    r"""\s*(?:(?P<open>\()|(?P<close>\))|(?P<quoted>(?:[a-z]+:)?"[^"]*")|(?P<word>[^\s()]+))"""
)
_FIELDS: Final = ("tag", "grader", "name")


def _tokens(text: str) -> list[tuple[str, int]]:
    tokens: list[tuple[str, int]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip():
                raise ConfigError(f"selection {text!r}: cannot read from column {position + 1}")
            break
        group = match.lastgroup or "word"
        tokens.append((match.group(group), match.start(group)))
        position = match.end()
    return tokens


def _atom(token: str, text: str, column: int) -> Selector:
    field, colon, value = token.partition(":")
    if not colon or field not in _FIELDS:
        field, value = "name", token
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value = value[1:-1]
    if not value:
        raise ConfigError(
            f"selection {text!r}: '{field}:' at column {column + 1} needs a value, "
            f"such as {field}:smoke"
        )
    if field == "tag":
        return lambda case: value in case.tags
    if field == "grader":
        return lambda case: value in case.graders
    return lambda case: fnmatchcase(case.name, value)


class _Parser:
    """Recursive descent over: or := and ('or' and)*; and := not ('and' not)*;
    not := 'not' not | atom | '(' or ')'."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def _peek(self) -> str | None:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else None

    def _column(self) -> int:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else len(self.text)

    def _fail(self, what: str) -> ConfigError:
        return ConfigError(f"selection {self.text!r}: {what} at column {self._column() + 1}")

    def parse(self) -> Selector:
        if not self.tokens:
            raise ConfigError("the selection is empty; write e.g. tag:smoke or 'growth-*'")
        selector = self._or()
        if self.at < len(self.tokens):
            raise self._fail(f"unexpected {self._peek()!r}")
        return selector

    def _or(self) -> Selector:
        parts = [self._and()]
        while self._peek() == "or":
            self.at += 1
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else (lambda case: any(p(case) for p in parts))

    def _and(self) -> Selector:
        parts = [self._not()]
        while self._peek() == "and":
            self.at += 1
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else (lambda case: all(p(case) for p in parts))

    def _not(self) -> Selector:
        token = self._peek()
        if token is None:
            raise self._fail("the expression ends too soon")
        if token == "not":
            self.at += 1
            inner = self._not()
            return lambda case: not inner(case)
        if token == "(":
            self.at += 1
            inner = self._or()
            if self._peek() != ")":
                raise self._fail("missing ')'")
            self.at += 1
            return inner
        if token in ("and", "or", ")"):
            raise self._fail(f"unexpected {token!r}")
        column = self._column()
        self.at += 1
        return _atom(token, self.text, column)


def parse_selection(text: str) -> Selector:
    """Parse a selection expression (see the module's docstring) into a Selector; a
    ConfigError names the column of what cannot be read."""
    return _Parser(text).parse()


def facts_of(name: str, tags: Iterable[str], graders: Iterable[str]) -> CaseFacts:
    """CaseFacts from plain iterables."""
    return CaseFacts(name, frozenset(tags), frozenset(graders))


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
        name globs; see `parse_selection`). `grader:X` matches a case when any entry
        of any of its turns has kind or name X. A syntax error is a ConfigError naming the
        column."""
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
