"""The strict-JSON check: details and reports hold only dict, list, str, int, float, bool, None."""

from __future__ import annotations

import math
from typing import Any, Final

from gradekit._frozen import FrozenDict

__all__ = ["json_problem", "plain_json"]


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


def json_problem(value: Any) -> tuple[str, str] | None:
    """None for strict JSON; else (error class, `$.path is what`) for the first problem."""
    if plain_json(value):
        return None
    found = _json_problem(value, set())
    if found is None:
        return None
    cls, parts, what = found
    return cls, "$" + "".join(reversed(parts)) + " " + what


def _json_problem(value: Any, active: set[int]) -> tuple[str, list[str], str] | None:
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else ("ValueError", [], f"is {value!r}")
    if isinstance(value, (dict, list, tuple)):
        if id(value) in active:
            return ("ValueError", [], "contains itself")
        active.add(id(value))
        try:
            if isinstance(value, dict):
                for key, item in value.items():
                    if type(key) is not str:
                        return ("TypeError", [], f"has a non-string key {key!r}")
                    found = _json_problem(item, active)
                    if found is not None:
                        found[1].append(f".{key}")
                        return found
            else:
                for index, item in enumerate(value):
                    found = _json_problem(item, active)
                    if found is not None:
                        found[1].append(f"[{index}]")
                        return found
        finally:
            active.discard(id(value))
        return None
    if isinstance(value, (int, str)):
        return None
    return ("TypeError", [], f"is a {kind.__name__}")
