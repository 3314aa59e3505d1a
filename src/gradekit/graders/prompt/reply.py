"""Reading a judgement out of a judge's reply text.

The judge is asked for JSON. Replies come as that JSON alone, in a fenced block, or inside
prose; all three are read by decoding every JSON object in the text and keeping the last one
of the asked shape (a judge that drafts and corrects itself ends with its answer). A reply
without one, or whose score is not a number, is an error, never a fail.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from gradekit.core.errors import JudgeReplyError
from gradekit.graders.prompt.providers import Token

__all__ = [
    "Judgement",
    "Path",
    "Score",
    "Weighted",
    "number_spans",
    "read_judgement",
    "token_at",
    "weighted_score",
]

Path = tuple[str | int, ...]

SHOWN: Final = 200
"""Characters of a reply quoted in an error message."""

_NUMERIC_TEXT: Final = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?)\s*)?")
"""A numeric string: `7`, `7.5`, or a fraction `7/10` (read on its own scale)."""

_INTEGER: Final = re.compile(r"\s*(\d+)\s*")
_SPACE: Final = re.compile(r"[ \t\n\r]*")
_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD: Final = re.compile(r"true|false|null|NaN|-?Infinity")


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


@attrs.frozen
class Score:
    """One score of a judgement: `value` on the 0..max_score scale after clamping, `given`
    as the judge wrote it, its `reasoning`, and with logprobs the distribution it came from."""

    value: float
    given: float
    reasoning: str = ""
    weighted: Weighted | None = None


@attrs.frozen
class Judgement:
    """What one reply said: the rubric's score, or one score per criterion (in the order of
    the criteria), and the reply's overall reasoning."""

    score: Score | None
    criteria: tuple[tuple[str, Score], ...] = ()
    reasoning: str = ""


def read_judgement(
    text: str,
    *,
    max_score: int,
    criteria: Sequence[str] = (),
    tokens: Sequence[Token] | None = None,
) -> Judgement:
    """The judgement in `text`; with `tokens` (logprob scoring) each score is the expectation
    at its token, and `text` must be the tokens' joined text. JudgeReplyError when unusable."""
    found = _last_judgement(text, criteria)
    if found is None:
        wanted = '"criteria"' if criteria else '"score"'
        raise JudgeReplyError(
            f"the judge's reply holds no JSON object with a {wanted}: {_excerpt(text)}; a "
            "reply without a score cannot be graded (try another model, or a clearer rubric)"
        )
    start, value = found
    spans = number_spans(text, start) if tokens is not None else {}

    def score_at(path: Path, item: Any, reasoning: str) -> Score:
        given = _number(item, path, max_score)
        clamped = min(float(max_score), max(0.0, given))
        if tokens is None:
            return Score(clamped, given, reasoning)
        span = spans.get(path)
        if span is None:
            raise JudgeReplyError(
                f"the score at {_where(path)} is not a JSON number, so no token holds it: "
                f"{_excerpt(text)}; use scoring: text"
            )
        token = tokens[token_at(tokens, span[0])]
        weighted = weighted_score(token, text[span[0] : span[1]], max_score)
        return Score(weighted.score, given, reasoning, weighted)

    reasoning = _text(value.get("reasoning"))
    if not criteria:
        return Judgement(score_at(("score",), value["score"], reasoning), (), reasoning)
    scores, prefix = _criteria_of(value, criteria)
    results = []
    for name in criteria:
        item = scores[name]
        if isinstance(item, Mapping):
            if "score" not in item:
                raise JudgeReplyError(f'the judge gave criterion {name!r} no "score"')
            results.append(
                (
                    name,
                    score_at((*prefix, name, "score"), item["score"], _text(item.get("reasoning"))),
                )
            )
        else:
            results.append((name, score_at((*prefix, name), item, "")))
    return Judgement(None, tuple(results), reasoning)


def _objects(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every outermost JSON object in `text`, in order, with its start offset."""
    decoder = json.JSONDecoder(strict=False)  # a raw newline inside a string is common
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            yield index, value
        index = text.find("{", end)


def _last_judgement(text: str, criteria: Sequence[str]) -> tuple[int, dict[str, Any]] | None:
    found = None
    for start, value in _objects(text):
        if criteria:
            inner = value.get("criteria")
            if isinstance(inner, (Mapping, list)) or all(name in value for name in criteria):
                found = start, value
        elif "score" in value:
            found = start, value
    return found


def _criteria_of(
    value: dict[str, Any], criteria: Sequence[str]
) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """The criterion scores of a reply, and their path prefix in it."""
    inner = value.get("criteria")
    if isinstance(inner, list):
        raise JudgeReplyError(
            'the judge gave "criteria" as a list; it must be an object with one key per criterion'
        )
    scores: Mapping[str, Any] = inner if isinstance(inner, Mapping) else value
    prefix: tuple[str, ...] = ("criteria",) if isinstance(inner, Mapping) else ()
    missing = [name for name in criteria if name not in scores]
    if missing:
        listed = ", ".join(repr(name) for name in missing)
        raise JudgeReplyError(f"the judge's reply scores no criterion {listed}")
    return scores, prefix


def _number(value: Any, path: Path, max_score: int) -> float:
    """The score the judge wrote, on the 0..max_score scale: a fraction such as `"4/5"` is
    four fifths of max_score, whatever its denominator."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer too large for a float
            number = math.inf
    elif isinstance(value, str) and (match := _NUMERIC_TEXT.fullmatch(value)) is not None:
        number = float(match.group(1))
        if match.group(2) is not None:
            over = float(match.group(2))
            if not over:
                raise JudgeReplyError(
                    f"the judge's score at {_where(path)} is a fraction over 0: {_excerpt(value)}"
                )
            number = number * max_score / over  # exact when the result is whole: 57/100
    else:
        shown = _excerpt(json.dumps(value)) if not isinstance(value, str) else _excerpt(value)
        raise JudgeReplyError(f"the judge's score at {_where(path)} is not a number: {shown}")
    if not math.isfinite(number):
        raise JudgeReplyError(f"the judge's score at {_where(path)} is not finite: {value!r}")
    return number


def _where(path: Path) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


def _excerpt(text: str) -> str:
    return repr(text if len(text) <= SHOWN else text[: SHOWN - 1] + "…")


# -- where each number of a JSON text is ----------------------------------------------------
# The text is known to be valid JSON (it was decoded first), so this scanner checks nothing:
# it walks the value and records spans. A key that appears twice keeps its last span, as
# `json.loads` keeps the last value.


def number_spans(text: str, start: int) -> dict[Path, tuple[int, int]]:
    """The (start, end) span in `text` of every number in the JSON value at `start`."""
    spans: dict[Path, tuple[int, int]] = {}
    _value(text, start, (), spans)
    return spans


def _skip(text: str, index: int) -> int:
    match = _SPACE.match(text, index)
    return index if match is None else match.end()


def _value(text: str, index: int, path: Path, spans: dict[Path, tuple[int, int]]) -> int:
    """Walk the value at `index` (after any space); return the index just after it."""
    index = _skip(text, index)
    char = text[index]
    if char == "{":
        return _object(text, index + 1, path, spans)
    if char == "[":
        return _array(text, index + 1, path, spans)
    if char == '"':
        match = _STRING.match(text, index)
        return index + 1 if match is None else match.end()
    number = _NUMBER.match(text, index)
    word = _WORD.match(text, index)
    if word is not None and (number is None or word.end() > number.end()):
        return word.end()
    if number is None:
        raise ValueError(f"not JSON at {index}")
    spans[path] = (index, number.end())
    return number.end()


def _object(text: str, index: int, path: Path, spans: dict[Path, tuple[int, int]]) -> int:
    index = _skip(text, index)
    if text[index] == "}":
        return index + 1
    while True:
        match = _STRING.match(text, _skip(text, index))
        if match is None:
            raise ValueError(f"not JSON at {index}")
        key = json.loads(match.group(0), strict=False)
        index = _skip(text, match.end()) + 1  # past the colon
        index = _skip(text, _value(text, index, (*path, key), spans))
        if text[index] == "}":
            return index + 1
        index += 1  # past the comma


def _array(text: str, index: int, path: Path, spans: dict[Path, tuple[int, int]]) -> int:
    index = _skip(text, index)
    if text[index] == "]":
        return index + 1
    position = 0
    while True:
        index = _skip(text, _value(text, index, (*path, position), spans))
        if text[index] == "]":
            return index + 1
        index += 1
        position += 1
