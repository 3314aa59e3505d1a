"""Grader options through cattrs: strict types, every problem at once, each with its path.

A kind declares its options as an attrs class. `structure_options` turns a plain mapping (from
YAML or Python) into an instance of that class, or raises one `ConfigError` whose `problems`
name every bad key with its path (`$.absolute_tolerance: expected a number, got 'abc'`). A YAML
`no` never becomes `True` and a string is never taken for a list of characters.

cattrs is imported on first use, so `import gradekit` stays fast.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from gradekit.core.errors import ConfigError, OptionError, Problem, hint_suffix
from gradekit.core.values import number_of

if typing.TYPE_CHECKING:
    import cattrs

__all__ = ["option_fields", "structure_options"]

T = TypeVar("T")

# Fields every attrs-class factory may have that are not options a user sets.
RESERVED_FIELDS = frozenset({"name"})


def option_fields(cls: type) -> list[attrs.Attribute[Any]]:
    """The attrs fields of `cls` that a user may set in a config (not `name`, not private)."""
    return [
        field
        for field in attrs.fields(cls)
        if field.init and field.name not in RESERVED_FIELDS and not field.name.startswith("_")
    ]


def structure_options(
    cls: type[T], config: Mapping[str, Any], *, kind: str, extra: Mapping[str, Any] | None = None
) -> T:
    """Build `cls` from `config`, or raise ConfigError listing every problem with its path.

    `extra` holds fields that are not user options (such as `name`), passed through unchecked.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(
            f"options for kind '{kind}' must be a mapping, got {config!r} ({type(config).__name__})"
        )
    known = {field.alias or field.name: field for field in option_fields(cls)}
    problems: list[Problem] = []
    for key in config:
        if key in known:
            continue
        suffix = hint_suffix(str(key), known)
        if not known:
            suffix = f" (kind '{kind}' takes no options)"
        message = f"unknown option '{key}' for kind '{kind}'{suffix}"
        problems.append(Problem((str(key),), message, key=True))
    if problems:
        raise ConfigError(f"invalid options for kind '{kind}'", problems)
    data = dict(config)
    if extra:
        data.update(extra)
    try:
        if not config and _defaults_suffice(cls, data):
            # No options: nothing to structure, so cattrs (slow to import: bench/RESULTS.md)
            # is not needed.
            return cls(**data)
        return _converter().structure(data, cls)
    except OptionError as error:
        raise ConfigError(
            f"invalid options for kind '{kind}'", [Problem((error.field,), error.message)]
        ) from None
    except Exception as error:
        problems = list(_problems(error, ()))
        if not problems:
            raise
        raise ConfigError(f"invalid options for kind '{kind}'", problems) from None


def _defaults_suffice(cls: type, extra: Mapping[str, Any]) -> bool:
    """True when `cls(**extra)` is what structuring `extra` would build: every other field
    has a default, and the extras are the plain strings they are declared as."""
    if not all(type(value) is str for value in extra.values()):
        return False
    return all(
        field.default is not attrs.NOTHING or (field.alias or field.name) in extra
        for field in attrs.fields(cls)
        if field.init
    )


def _problems(error: BaseException, path: tuple[str | int, ...]) -> typing.Iterator[Problem]:
    """Flatten a cattrs validation error group into problems with paths."""
    from cattrs.errors import ClassValidationError, IterableValidationError

    if isinstance(error, (ClassValidationError, IterableValidationError)):
        with_notes, without = error.group_exceptions()
        for inner, note in with_notes:
            step: str | int = getattr(note, "name", None) or getattr(note, "index", 0) or 0
            if isinstance(inner, KeyError) and isinstance(error, ClassValidationError):
                yield Problem((*path, step), "this option is required")
            else:
                yield from _problems(inner, (*path, step))
        for inner in without:
            yield from _problems(inner, path)
    elif isinstance(error, OptionError):
        yield Problem((*path, error.field), error.message)
    elif isinstance(error, (ValueError, TypeError, KeyError)):
        yield Problem(path, _message(error))


def _message(error: BaseException) -> str:
    if isinstance(error, KeyError) and error.args:
        return f"missing key {error.args[0]!r}"
    return str(error)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return f"{value!r} ({type(value).__name__})"


def _strict_bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError(f"expected true or false, got {_describe(value)}")


def _strict_float(value: Any, _: type) -> float:
    try:
        number = number_of(value)
    except OverflowError:
        shown = (
            f"a whole number of {len(str(abs(value)))} digits"
            if isinstance(value, int)
            else _describe(value)
        )
        raise TypeError(
            f"expected a number, got {shown}, too large for a float (it would be infinity)"
        ) from None
    if number is None:
        raise TypeError(f"expected a number, got {_describe(value)}")
    return number


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise TypeError(f"expected a whole number, got {_describe(value)}")


def _strict_str(value: Any, _: type) -> str:
    if isinstance(value, str):
        return value
    raise TypeError(f"expected a string, got {_describe(value)}")


def _literal_hook(type_: Any, _: Any) -> Callable[[Any, Any], Any]:
    allowed = typing.get_args(type_)
    listed = ", ".join(repr(item) for item in allowed)

    def structure(value: Any, _: Any) -> Any:
        if isinstance(value, (str, int, float, bool)) and value in allowed:
            return value
        raise TypeError(f"expected one of {listed}, got {_describe(value)}")

    return structure


def _is_literal(type_: Any) -> bool:
    return typing.get_origin(type_) is typing.Literal


def _is_sequence(type_: Any) -> bool:
    from cattrs.cols import is_sequence

    return bool(is_sequence(type_))


def _sequence_hook(type_: Any, converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    from cattrs.cols import homogenous_tuple_structure_factory, list_structure_factory

    origin = typing.get_origin(type_)
    args = typing.get_args(type_)
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        inner = converter.get_structure_hook(type_)
    elif origin is tuple:
        inner = homogenous_tuple_structure_factory(type_, converter)
    else:
        inner = list_structure_factory(type_, converter)

    def structure(value: Any, target: Any) -> Any:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
            raise TypeError(f"expected a list, got {_describe(value)}")
        return inner(value, target)

    return structure


def _mapping_hook(type_: Any, converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    from cattrs.cols import mapping_structure_factory

    inner = mapping_structure_factory(type_, converter)

    def structure(value: Any, target: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping, got {_describe(value)}")
        return inner(value, target)

    return structure


@functools.cache
def _converter() -> cattrs.Converter:
    import cattrs
    from cattrs.cols import is_mapping

    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(str, _strict_str)
    factories: list[tuple[Callable[[Any], bool], Any]] = [
        (_is_literal, _literal_hook),
        (_is_sequence, _sequence_hook),
        (is_mapping, _mapping_hook),
    ]
    for predicate, factory in factories:
        converter.register_structure_hook_factory(predicate, factory)
    return converter
