"""Immutable containers for sample data, so no grader can change what the next one sees."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NoReturn, TypeVar

__all__ = ["EMPTY", "FrozenDict", "freeze", "thaw"]

K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A `dict` that refuses every change; picklable and JSON-serialisable like a dict."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "this mapping is read-only: graders may not change sample data; copy it with dict()"
        )

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


EMPTY: FrozenDict[Any, Any] = FrozenDict()


def freeze(value: Any) -> Any:
    """Return `value` with every dict made a FrozenDict and every list a tuple, recursively."""
    kind = type(value)
    if kind in _PLAIN:  # the usual cases first, before the ABC checks (a microsecond each)
        return value
    if kind is dict:
        for item in value.values():
            if type(item) not in _PLAIN:
                return FrozenDict({key: freeze(item) for key, item in value.items()})
        return FrozenDict(value)  # plain values (the usual arguments): one copy
    if kind is list or kind is tuple:
        return tuple([freeze(item) for item in value])
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(freeze(item) for item in value)
    return value


_PLAIN: Final = frozenset({str, int, float, bool, type(None)})


def thaw(value: Any) -> Any:
    """The inverse of `freeze`: plain dicts and lists, for JSON output and user code."""
    kind = type(value)
    # Exact types first: the ABC checks below cost about a microsecond each, and reports thaw
    # every result's details.
    if kind in _PLAIN:
        return value
    if kind is dict or kind is FrozenDict:
        return {key: thaw(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [thaw(item) for item in value]
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return [thaw(item) for item in value]
    return value


def frozen_tuple(values: Iterable[Any] | None) -> tuple[Any, ...]:
    """Freeze an optional iterable into a tuple (None becomes the empty tuple)."""
    return () if values is None else tuple(freeze(v) for v in values)
