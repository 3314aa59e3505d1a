"""Selection expressions: which cases of a suite to grade, as `--select` writes them.

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
from typing import Final

import attrs

from gradekit.core.errors import ConfigError

__all__ = ["CaseFacts", "Selector", "parse_selection"]


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
