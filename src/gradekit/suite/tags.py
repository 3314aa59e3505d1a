"""`tags:` of a case and of the suite: a list of strings, the suite's added to every case's.

Tags are what `--select tag:NAME` reads (see `gradekit.suite.selection`) and what the reports
show beside each case; they are not metadata, and graders do not see them.
"""

from __future__ import annotations

from typing import Any

from gradekit._errors import Problem
from gradekit.suite.parse import KeyPath, describe

__all__ = ["parse_tags", "with_tags"]


def parse_tags(value: Any, path: KeyPath, problems: list[Problem]) -> tuple[str, ...]:
    """The tags `value` (found at `path`) gives, in order without repeats; a value that is
    not a list of non-empty strings is a problem (and gives no tags)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(
            Problem(
                path,
                f"expected a list of tags (strings), got {describe(value)}; "
                "write tags: [smoke, slow]",
            )
        )
        return ()
    for index, tag in enumerate(value):
        if not (isinstance(tag, str) and tag.strip()):
            problems.append(
                Problem((*path, index), f"a tag is a non-empty string, got {describe(tag)}")
            )
            return ()
    return tuple(dict.fromkeys(value))


def with_tags(first: tuple[str, ...], then: tuple[str, ...]) -> tuple[str, ...]:
    """`first` then the tags of `then` not in it (the suite's tags, then the case's own)."""
    if not first:
        return then
    if not then:
        return first
    return tuple(dict.fromkeys((*first, *then)))
