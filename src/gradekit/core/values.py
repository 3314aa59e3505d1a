"""The rules for values every layer shares, each in one place: numbers, timeouts, texts
written and strict JSON.

Numbers: fractions in [0, 1], and a computed mean against its threshold.

Timeouts: the one rule: a finite number of seconds > 0, at most a day.

Every timeout gradekit takes goes through `seconds_problem` / `seconds`: a suite's and a grader
entry's `timeout`, the `timeout` option of the process-running kinds, `GraderDefaults(timeout=)`,
`grade(timeout=)`, a `GraderEntry` made in Python, and `--timeout`. NaN compares false with
everything, so a check such as `value <= 0` lets it through and the timeout never fires; the
upper bound keeps every clock and wait call gradekit makes within what it can represent.

UTF-8 for every text gradekit writes, lone surrogates included.

A lone surrogate (half of an emoji cut in two: the JSON escape `\ud800` alone) is valid in a
Python string read from JSON, and has no UTF-8 form: the strict encoder refuses it. Every
file gradekit writes takes U+FFFD in its place (`REPLACE_SURROGATES`), as the JUnit report
does for every character XML cannot hold. Other texts are encoded as usual, at no extra cost:
the handler runs only where the strict encoder would refuse.

Strict JSON: details and reports hold only dict, list, str, int, float, bool, None.
"""

from __future__ import annotations

import codecs
import math
import re
from typing import Any, Final, Literal, NamedTuple

from gradekit.core.errors import ConfigError
from gradekit.core.types import FrozenDict

__all__ = [
    "MAX_SECONDS",
    "REPLACE_SURROGATES",
    "ROUNDING",
    "ExactSum",
    "JsonProblem",
    "find_json_problem",
    "fraction_problem",
    "json_problem",
    "number_of",
    "overflow_problem",
    "plain_json",
    "reaches",
    "seconds",
    "seconds_problem",
    "utf8",
    "written",
    "yaml_seconds",
]


ROUNDING: Final = 1e-9
"""How far below its threshold a computed mean may fall and still reach it: sums of floats
lose their last bits (three scores of 0.7 add up to 2.0999999999999996)."""


def reaches(mean: float, threshold: float) -> bool:
    """`mean >= threshold` for a mean gradekit computed (of weighted scores, of a judge's
    samples or criteria): a mean that equals the threshold but for float rounding reaches it,
    so three scores of 0.7 pass a threshold of 0.7."""
    return mean >= threshold - ROUNDING


def fraction_problem(value: float) -> str | None:
    """None for a number from 0 to 1 (a threshold, a weight share); else what is wrong with
    it, worded for an error at its key. NaN is never between 0 and 1."""
    if 0.0 <= value <= 1.0:
        return None
    return f"must be between 0 and 1, got {value!r}"


_INFINITY_WORD: Final = re.compile(r"\s*[+-]?(inf|infinity)\s*", re.IGNORECASE)


def number_of(value: object) -> float | None:
    """An option's number as a float: an int or a float (not a bool), or numeric text, since
    YAML 1.1 reads `1e-6` and `1e3` (no dot) as text; None for anything else. An int too
    large for a float, or numeric text that overflows one (`1e999`, which Python reads as
    infinity without a word), raises OverflowError; `inf` written as a word is infinity."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        if math.isinf(number) and not _INFINITY_WORD.fullmatch(value):
            raise OverflowError(f"{value!r} is too large for a float")
        return number
    return None


def overflow_problem(written: str) -> str:
    """The message for a number written as `written` that is too large for a float: Python
    reads it as infinity, which no one wrote."""
    return f"the number {written} is too large for a float (it would be infinity)"


MAX_SECONDS: Final = 86_400.0
"""The longest timeout, in seconds (a day): a grade that runs longer has hung."""


def _shown(value: Any) -> str:
    """`value` for the message; an int too long to print (or to read) is described instead."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a whole number of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def seconds_problem(value: Any) -> str | None:
    """Why `value` is not a timeout (a message for the user), or None when it is one."""
    valid = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and 0 < value <= MAX_SECONDS  # false for NaN, and exact for ints of any size
    )
    if valid:
        return None
    limit = f"{MAX_SECONDS:g}"
    return f"expected a finite number of seconds > 0 and at most {limit}, got {_shown(value)}"


def seconds(value: Any) -> float:
    """`value` as a timeout in seconds; ConfigError (a ValueError) when it is not one."""
    problem = seconds_problem(value)
    if problem is not None:
        raise ConfigError(f"timeout: {problem}")
    return float(value)


def yaml_seconds(value: Any) -> Any:
    """A suite file's timeout written as numeric text (`1e2`, which YAML 1.1 reads as text,
    or `'10'`) as its number, as a kind's options read numbers; any other value as it is,
    for `seconds_problem` to judge."""
    if isinstance(value, str):
        try:
            number = number_of(value)
        except OverflowError:  # `1e999`: judged as the text it is, not as infinity
            return value
        if number is not None:
            return number
    return value


REPLACE_SURROGATES: Final = "gradekit.replace_surrogates"
"""The `errors` handler of every UTF-8 write: U+FFFD for each character UTF-8 cannot hold
(only lone surrogates are such). For `str.encode` and `open(..., errors=...)`."""


_FFFD: Final = "\ufffd".encode()


def _replacement(error: UnicodeError) -> tuple[bytes, int]:
    # Bytes: the UTF-8 encoder takes only ASCII text from a handler.
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return _FFFD * (error.end - error.start), error.end


codecs.register_error(REPLACE_SURROGATES, _replacement)


def utf8(text: str) -> bytes:
    """`text` in UTF-8, with U+FFFD for each lone surrogate."""
    return text.encode("utf-8", REPLACE_SURROGATES)


def written(text: str) -> str:
    """`text` as every file holds it: U+FFFD for each lone surrogate. For names, which runs
    match against the files of earlier runs (`--resume`, baselines)."""
    if text.isascii():  # the usual name: nothing to replace
        return text
    return utf8(text).decode()


_SCALARS: Final = frozenset({str, bool, int, type(None)})


def plain_json(value: Any, depth: int = 0) -> bool:
    """A quick yes for the common shapes of details (small, acyclic, plain types): True only
    for strict JSON; False means "not sure", for `json_problem` to decide."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth > 20:  # deep (or cyclic): leave it to the thorough check
        return False
    # Plain loops: faster here than any C-level pass over a few items (no temporary objects).
    if kind is dict or kind is FrozenDict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            if type(item) not in _SCALARS and not plain_json(item, depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _SCALARS and not plain_json(item, depth + 1):
                return False
        return True
    return False


class JsonProblem(NamedTuple):
    """The first thing in a value that strict JSON cannot hold.

    `reason` is `nonfinite` (a NaN or an infinity), `key` (a mapping key that is not a
    string), `cycle` (a container that holds itself) or `type` (a value of another type);
    `path` leads to it from the root (mapping keys and sequence indexes); `value` is the
    offending value (the key, for `key`). Callers word the error their own way.
    """

    reason: Literal["nonfinite", "key", "cycle", "type"]
    path: tuple[str | int, ...]
    value: Any

    @property
    def error_class(self) -> str:
        """`ValueError` for a bad value of a JSON type, `TypeError` for a type JSON lacks."""
        return "ValueError" if self.reason in ("nonfinite", "cycle") else "TypeError"


def find_json_problem(value: Any) -> JsonProblem | None:
    """None for strict JSON (dict with string keys, list, tuple, str, int, finite float,
    bool, None); else the first problem found, depth first."""
    if plain_json(value):
        return None
    return _walk(value, [], set())


def json_problem(value: Any) -> tuple[str, str] | None:
    """None for strict JSON; else (error class, `$.path is what`) for the first problem."""
    problem = find_json_problem(value)
    if problem is None:
        return None
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in problem.path)
    if problem.reason == "nonfinite":
        what = f"is {problem.value!r}"
    elif problem.reason == "key":
        what = f"has a non-string key {problem.value!r}"
    elif problem.reason == "cycle":
        what = "contains itself"
    else:
        what = f"is a {type(problem.value).__name__}"
    return problem.error_class, f"{where} {what}"


def _walk(value: Any, path: list[str | int], active: set[int]) -> JsonProblem | None:
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else JsonProblem("nonfinite", tuple(path), value)
    if isinstance(value, (dict, list, tuple)):
        if id(value) in active:
            return JsonProblem("cycle", tuple(path), value)
        active.add(id(value))
        try:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(value, dict) and type(key) is not str:
                    return JsonProblem("key", tuple(path), key)
                path.append(key)
                found = _walk(item, path, active)
                path.pop()
                if found is not None:
                    return found
        finally:
            active.discard(id(value))
        return None
    if isinstance(value, (int, str)):
        return None
    return JsonProblem("type", tuple(path), value)


class ExactSum:
    """A running sum of floats kept exact until it is read: the same numbers give the same
    float in whatever order they were added or merged (a run that streams its cases sums them
    in another order than one that keeps them, and their reports must be equal to the bit).

    The sum is held as non-overlapping partials (Shewchuk's algorithm, what `math.fsum`
    keeps inside); `value` rounds their exact total once. Finite numbers only.
    """

    __slots__ = ("partials",)

    def __init__(self) -> None:
        self.partials: list[float] = []
        """Floats whose exact total is the sum, smallest magnitude first."""

    def add(self, number: float) -> None:
        """Add `number` exactly."""
        partials = self.partials
        kept = 0
        for held in partials:
            big, small = (number, held) if abs(number) >= abs(held) else (held, number)
            high = big + small
            low = small - (high - big)
            if low:
                partials[kept] = low
                kept += 1
            number = high
        partials[kept:] = [number]

    def merge(self, other: ExactSum) -> None:
        """Add everything `other` holds."""
        for partial in other.partials:
            self.add(partial)

    def value(self, *more: float) -> float:
        """The sum (with `more` added), rounded once."""
        return math.fsum([*self.partials, *more])
