"""Close-match hints: the "did you mean" of every error that names a wrong word."""

from __future__ import annotations

import typing

__all__ = ["close_matches", "did_you_mean", "hint_suffix"]


def close_matches(word: str, candidates: typing.Iterable[str]) -> list[str]:
    """Up to three candidates that look like `word`: the 'did you mean' of every error."""
    import difflib  # only when a name is wrong: not on every registry import

    return difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.75)


def did_you_mean(word: str, candidates: typing.Iterable[str]) -> str | None:
    """`did you mean 'threshold'?` for the closest candidate, or None when none is close."""
    hits = close_matches(word, candidates)
    return f"did you mean '{hits[0]}'?" if hits else None


def hint_suffix(word: str, candidates: typing.Iterable[str]) -> str:
    """` (did you mean 'threshold'?)`, to end an error message with, or "" when none is close."""
    hint = did_you_mean(word, candidates)
    return f" ({hint})" if hint else ""
