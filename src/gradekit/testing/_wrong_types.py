"""Wrong-typed values for a kind's options, derived from its options class or its examples.

For an attrs options class every field whose type is plain enough gets a value of another
type (`"no"` for a bool, `"abc"` for a number or a list, a list for a string). A kind without
an options class gets the same treatment for the keys its example config sets, from the
example values' types.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any, Final

import attrs

from gradekit.registry.options import option_fields

__all__ = ["wrong_values"]

_NOT_A_LIST: Final = "abc"
_NOT_A_STRING: Final = [1, 2]
_MAPPINGS: Final = (dict, Mapping, collections.abc.Mapping, collections.abc.MutableMapping)
_SEQUENCES: Final = (list, tuple, collections.abc.Sequence, collections.abc.Set, frozenset, set)
_NOTHING: Final = object()


def _for_type(hint: Any) -> Any:
    """A value that `hint` does not accept, or _NOTHING when no such value is sure."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _for_type(inner[0]) if len(inner) == 1 else _NOTHING
    if hint is bool:
        return "no"
    if hint in (int, float):
        return "abc"
    if hint is str or origin is typing.Literal:
        return _NOT_A_STRING
    if hint in _MAPPINGS or hint in _SEQUENCES:
        return _NOT_A_LIST
    if isinstance(origin, type) and issubclass(origin, (Mapping, *_SEQUENCES)):
        return _NOT_A_LIST
    if isinstance(hint, type) and (attrs.has(hint) or issubclass(hint, Mapping)):
        return _NOT_A_LIST
    return _NOTHING


def _for_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "no"
    if isinstance(value, (int, float)):
        return "abc"
    if isinstance(value, str):
        return _NOT_A_STRING
    if isinstance(value, (list, tuple, Mapping)):
        return _NOT_A_LIST
    return _NOTHING


def wrong_values(
    options_class: type | None, example: Mapping[str, Any]
) -> Iterator[tuple[str, Any]]:
    """(option, wrong value) pairs to try, one option at a time.

    Raises TypeError when the options class's type hints cannot be resolved.
    """
    if options_class is not None:
        try:
            hints = typing.get_type_hints(options_class)
        except Exception as error:
            raise TypeError(
                f"cannot read the type hints of {options_class.__qualname__}: {error}"
            ) from error
        for field in option_fields(options_class):
            value = _for_type(hints.get(field.name, Any))
            if value is not _NOTHING:
                yield field.alias or field.name, value
        return
    for key, item in example.items():
        value = _for_value(item)
        if value is not _NOTHING:
            yield str(key), value
