"""Probability-weighted scores (G-Eval, Liu et al. 2023): instead of the score the judge
wrote, the expectation of the score over the judge's probabilities at that token.

The token read is the one at which the judge wrote the score it was asked for (found by its
place in the reply's JSON), never the first digit of the reply: a digit inside the reasoning
("3 of the 4 tests pass") is not the score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Final

import attrs

from gradekit.graders.prompt._errors import JudgeReplyError
from gradekit.graders.prompt.providers import Token

__all__ = ["Weighted", "token_at", "weighted_score"]

_INTEGER: Final = re.compile(r"\s*(\d+)\s*")


@attrs.frozen
class Weighted:
    """The expectation `score` over `distribution` (score -> probability, summing to 1);
    `mass` is the probability the judge gave to score tokens before they were normalised."""

    score: float
    distribution: dict[int, float]
    mass: float


def token_at(tokens: Sequence[Token], offset: int) -> int:
    """The index of the token covering character `offset` of the tokens' joined text."""
    end = 0
    for index, token in enumerate(tokens):
        end += len(token.text)
        if offset < end:
            return index
    raise ValueError(f"offset {offset} is past the reply's tokens")


def weighted_score(token: Token, written: str, max_score: int) -> Weighted:
    """The expected score at `token`, where the judge wrote `written` (the score's text).

    Alternatives are the token and its `top` list; those that are a whole number from 0 to
    `max_score` count, weighted by their probability and normalised.
    """
    if _INTEGER.fullmatch(token.text) is None or token.text.strip() != written:
        raise JudgeReplyError(
            f"the score {written!r} is not one token of its own (the token is "
            f"{token.text!r}); scoring by logprobs reads one token: use a max_score of 9 or "
            "less, or scoring: text"
        )
    weights: dict[int, float] = {}
    seen: set[str] = set()
    for text, logprob in ((token.text, token.logprob), *token.top):
        if text in seen:
            continue
        seen.add(text)
        match = _INTEGER.fullmatch(text)
        if match is None or not math.isfinite(logprob):
            continue
        value = int(match.group(1))
        if value <= max_score:
            weights[value] = weights.get(value, 0.0) + math.exp(logprob)
    mass = sum(weights.values())
    if mass <= 0.0:
        raise JudgeReplyError(
            f"the judge gave no probability to any score token at the score {written!r}; "
            "use scoring: text"
        )
    distribution = {value: weight / mass for value, weight in sorted(weights.items())}
    score = sum(value * probability for value, probability in distribution.items())
    return Weighted(score=score, distribution=distribution, mass=mass)
