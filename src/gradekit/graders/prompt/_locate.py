"""Where each number of a JSON text is: the character span of every number value, by path.

Logprob scoring needs the token at which the judge wrote its score, so it needs the score's
place in the reply's text, which `json.loads` does not give. The text is known to be valid
JSON (it was decoded first), so this scanner checks nothing: it walks the value and records
spans. A key that appears twice keeps its last span, as `json.loads` keeps the last value.
"""

from __future__ import annotations

import json
import re
from typing import Final

__all__ = ["Path", "number_spans"]

Path = tuple[str | int, ...]

_SPACE: Final = re.compile(r"[ \t\n\r]*")
_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD: Final = re.compile(r"true|false|null|NaN|-?Infinity")


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
