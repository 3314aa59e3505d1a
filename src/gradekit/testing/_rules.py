"""The contract every grader kind keeps: each rule once, as a check function.

GraderContract's test methods, `check_grader`, the pytest plugin and `gradekit check-pack` all
run these same rules through `_contract`. A rule has a scope:

- `kind`: about the kind itself; `check(subject)` returns (message, example) or None.
- `config`: about creating graders from options; same signature, the example is a config.
- `sample`: about grading; `prepare(subject, grader)` gives the state the check needs (or
  raises NotApplicable for an ability the grader lacks, Broken for a failure found before any
  sample), then `check(state, example)` returns a message or None for each drawn example,
  which hypothesis searches and shrinks (those checks are in `_grading_rules`).

Also owns the wrong-typed values the `wrong_type` rule gives a kind's options
(`wrong_values`), derived from its options class or its examples: for an attrs options class
every field whose type is plain enough gets a value of another type (`"no"` for a bool,
`"abc"` for a number or a list, a list for a string); a kind without an options class gets the
same treatment for the keys its example config sets, from the example values' types.
"""

from __future__ import annotations

import collections.abc
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, Literal

import attrs

from gradekit.core.errors import (
    ConfigError,
    DuplicateKindError,
    GradekitError,
    PluginLoadError,
    UnknownKindError,
)
from gradekit.core.types import error_text
from gradekit.registry.options import option_fields
from gradekit.testing import _grading_rules as grading
from gradekit.testing._subject import CONTRACT_NAME, NotApplicable, Subject, canonical_name

__all__ = ["RULES", "Rule", "rule_named", "wrong_values"]


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


Finding = tuple[str, Any]
UNKNOWN_OPTION: Final = "no_such_option_of_the_contract"


@attrs.frozen
class Rule:
    """One rule of the contract: its name, the sentence it checks, its scope and its check."""

    name: str
    summary: str
    scope: Literal["kind", "config", "sample"]
    check: Callable[..., Any]
    prepare: Callable[[Subject, Any], Any] | None = None
    pairs: bool = False


# -- the kind ---------------------------------------------------------------------------


def _resolves(subject: Subject) -> Finding | None:
    try:
        factory = subject.registry.factory(subject.kind)
    except GradekitError as error:
        return f"the registry cannot resolve the kind: {error}", subject.kind
    if subject.factory is not None and factory is not subject.factory:
        return (
            f"the kind resolves to {factory!r}, not to the pack's factory {subject.factory!r}",
            subject.kind,
        )
    return None


def _needs_a_dot(distribution: str) -> bool:
    # Only a pack's entry point needs a dot: code may register any name, gradekit its own.
    return distribution != "<registered>" and canonical_name(distribution) != "gradekit"


def _namespaced(subject: Subject) -> Finding | None:
    if "." in subject.kind:
        return None
    sources = [info for info in subject.registry.describe() if info.kind == subject.kind]
    foreign = [info for info in sources if _needs_a_dot(info.distribution)]
    if not foreign:
        return None
    source = foreign[0]
    return (
        f"kind '{subject.kind}' from {source.distribution} ({source.value}) has no namespace: "
        f"names without a dot are gradekit's own kinds; name it after your pack, such as "
        f"'acme.{subject.kind}'",
        subject.kind,
    )


# -- creating graders --------------------------------------------------------------------


_NOT_ABOUT_CONFIG: Final = (DuplicateKindError, PluginLoadError, UnknownKindError)


def _creates(subject: Subject) -> Finding | None:
    try:
        grader = subject.create()
    except Exception as error:
        message = f"the factory rejected the example config: {error_text(error)}"
        # The hint is about the config: not for a kind missing or provided twice.
        hint = "" if isinstance(error, _NOT_ABOUT_CONFIG) else subject.hint
        return message + hint, subject.config
    if grader.kind != subject.kind:
        return f"created a grader whose kind is {grader.kind!r}", subject.config
    if grader.name != CONTRACT_NAME:
        return (
            f"created with name {CONTRACT_NAME!r}, the grader is named {grader.name!r}: a "
            "factory must give its grader the name it is called with",
            subject.config,
        )
    return None


def _names(error: ConfigError, key: str) -> bool:
    if any(problem.path[:1] == (key,) for problem in error.problems):
        return True
    # The key as a word of its own (`$.k: ...` names it), not inside a word or after a
    # dotted name's dot: `k` is not named by "kind 'acme.topk'".
    return re.search(rf"(?<!\w)(?<!\w\.){re.escape(key)}(?!\w)", str(error)) is not None


def _rejected(subject: Subject, config: dict[str, Any], key: str, what: str) -> Finding | None:
    try:
        subject.create(config)
    except ConfigError as error:
        if _names(error, key):
            return None
        return f"the ConfigError for {what} does not name '{key}': {error}", config
    except Exception as error:
        raised = f"{what} raised {error_text(error)}{grading.source_line(error)}"
        return f"{raised}, not a ConfigError naming '{key}'", config
    return f"{what} was accepted: a ConfigError naming '{key}' was expected", config


def _unknown_option(subject: Subject) -> Finding | None:
    config = {**subject.config, UNKNOWN_OPTION: True}
    return _rejected(subject, config, UNKNOWN_OPTION, f"the unknown option '{UNKNOWN_OPTION}'")


def _wrong_type(subject: Subject) -> Finding | None:
    try:
        options = subject.registry.options_class(subject.kind)
        tries = list(wrong_values(options, subject.config))
    except (GradekitError, TypeError) as error:
        raise NotApplicable(f"the kind's options cannot be read: {error}") from error
    if not tries:
        raise NotApplicable(
            "no option with a plain type (bool, number, string, list, mapping) to give a wrong "
            "value to; declare the options as an attrs class (or `options_class`)"
        )
    for key, value in tries:
        what = f"option '{key}' set to {value!r} ({type(value).__name__})"
        found = _rejected(subject, {**subject.config, key: value}, key, what)
        if found is not None:
            return found
    return None


RULES: Final = (
    Rule("resolves", "the kind resolves through the registry to its factory", "kind", _resolves),
    Rule("namespaced", "a kind from outside gradekit is dotted (acme.rouge)", "kind", _namespaced),
    Rule("creates", "the factory returns a Grader of this kind and name", "config", _creates),
    Rule(
        "well_formed",
        "grade never raises and returns a well-formed GradeResult",
        "sample",
        grading.well_formed,
        grading.the_grader,
    ),
    Rule(
        "deterministic",
        "the same sample always gets the same result",
        "sample",
        grading.deterministic,
        grading.deterministic_state,
    ),
    Rule(
        "leaves_sample",
        "grading does not change the sample",
        "sample",
        grading.leaves_sample,
        grading.the_grader,
    ),
    Rule(
        "agrade_agrees",
        "agrade, when present, agrees with grade",
        "sample",
        grading.agrade_agrees,
        grading.agrade_state,
    ),
    Rule(
        "blocking_agrees",
        "grade_blocking, when present, agrees with grade and returns once cancelled",
        "sample",
        grading.blocking_agrees,
        grading.blocking_state,
    ),
    Rule(
        "inline_pure",
        "a grader marked inline is pure",
        "sample",
        grading.inline_pure,
        grading.inline_state,
        pairs=True,
    ),
    Rule(
        "pickles",
        "the grader pickles and its copy grades alike",
        "sample",
        grading.pickles,
        grading.pickled_state,
    ),
    Rule(
        "unknown_option",
        "an unknown option is a ConfigError naming the key",
        "config",
        _unknown_option,
    ),
    Rule(
        "wrong_type", "a wrong-typed option is a ConfigError naming the key", "config", _wrong_type
    ),
)


def rule_named(name: str) -> Rule:
    """The rule called `name` (KeyError for an unknown name)."""
    for rule in RULES:
        if rule.name == name:
            return rule
    raise KeyError(name)
