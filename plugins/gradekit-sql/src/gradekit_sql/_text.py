"""What both SQL kinds share: the SQL text of a sample's value, and error results."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import attrs
from gradekit import GradeResult

__all__ = ["Fenced", "data_error", "fenced_sql", "not_sql", "sql_text", "what_it_is"]

# An opening fence as CommonMark writes one: up to three spaces, then three or more backticks
# (with no backtick in the info string after them) or three or more tildes.
_OPENING: Final = re.compile(r"^ {0,3}(?P<fence>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)$")


def sql_text(value: Any) -> str | None:
    """The SQL held by a sample's output or expected value: a string (None counts as empty);
    None when the value is a mapping, a list or another non-text value."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return None


def data_error(
    kind: str, name: str, message: str, details: Mapping[str, Any] | None = None
) -> GradeResult:
    """An error result: the grader could not grade this sample (not the agent's failure)."""
    return GradeResult.of_error(kind, name, f"ValueError: {message}", message, details)


def what_it_is(value: Any) -> str:
    """What a non-text value is, for a message: `a mapping`, `a list`, `a number`..."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def not_sql(kind: str, name: str, value: Any) -> GradeResult:
    """The error result for an output that is structured data, not SQL text."""
    return data_error(kind, name, f"the output is {what_it_is(value)}, not SQL text")


@attrs.frozen
class Fenced:
    """The SQL read from a fenced code block: its text, which block (1-based) of how many, or,
    when no block holds SQL, the tags of those there are (`sql` is None)."""

    sql: str | None
    block: int
    blocks: int
    tags: tuple[str, ...] = ()


def _blocks(text: str) -> list[tuple[str, str]]:
    """(info string's first word, lowercased; content) of every fenced block of `text`, in
    order; an unclosed block runs to the end, as in CommonMark."""
    found: list[tuple[str, str]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = _OPENING.match(lines[index])
        index += 1
        if opening is None:
            continue
        fence = opening["fence"]
        indent = len(lines[index - 1]) - len(lines[index - 1].lstrip(" "))
        words = opening["info"].split()
        body: list[str] = []
        while index < len(lines):
            line = lines[index]
            index += 1
            stripped = line.strip()
            if (
                stripped.startswith(fence)
                and set(stripped) == {fence[0]}
                and len(line) - len(line.lstrip(" ")) <= 3
            ):
                break
            # CommonMark removes up to the opening fence's indentation from each line.
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
        found.append((words[0].lower() if words else "", "\n".join(body)))
    return found


def _is_sql_tag(tag: str, dialect: str) -> bool:
    return "sql" in tag or tag == dialect.lower()


def fenced_sql(text: str, dialect: str) -> Fenced | None:
    """The SQL of `text`'s fenced code blocks, or None when it has none.

    Of several blocks, the last one tagged as SQL (a tag containing `sql`, such as `sql`,
    `sqlite`, `mysql`, or the dialect's name) is read; without one, the last untagged block.
    Blocks tagged otherwise (`python`) are never read.
    """
    blocks = _blocks(text)
    if not blocks:
        return None
    tagged = [i for i, (tag, _) in enumerate(blocks) if tag and _is_sql_tag(tag, dialect)]
    untagged = [i for i, (tag, _) in enumerate(blocks) if not tag]
    chosen = tagged or untagged
    if not chosen:
        tags = tuple(dict.fromkeys(tag for tag, _ in blocks))
        return Fenced(None, 0, len(blocks), tags)
    return Fenced(blocks[chosen[-1]][1], chosen[-1] + 1, len(blocks))
