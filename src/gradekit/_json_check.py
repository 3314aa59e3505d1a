"""The strict-JSON check: details and reports hold only dict, list, str, int, float, bool, None."""

from __future__ import annotations

import math
from typing import Any, Final, Literal, NamedTuple

from gradekit._frozen import FrozenDict

__all__ = ["JsonProblem", "find_json_problem", "json_problem", "plain_json"]


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
