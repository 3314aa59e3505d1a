"""Close-match hints: the "did you mean" of every error that names a wrong word."""

from __future__ import annotations

import difflib
import typing

__all__ = ["close_matches"]


def close_matches(word: str, candidates: typing.Iterable[str]) -> list[str]:
    """Up to three candidates that look like `word`: the 'did you mean' of every error."""
    return difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.75)
