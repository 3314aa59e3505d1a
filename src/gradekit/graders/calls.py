"""Expected tool calls (`behavior`'s `expected_calls`): argument matchers, each expected call's
rules, the matching of the calls made to the calls expected, and BFCL's answer keys read as
expected calls (`expected_calls_from_bfcl`).

A listed argument is a literal (numbers compare numerically, so `206588` equals `206588.0`;
booleans only equal booleans; lists and maps compare deeply, element by element) or one of the
matcher maps `{regex: p}` (full match, under a time limit: `gradekit.graders.patterns`),
`{contains: x}`, `{numeric: n, tolerance: t}` and `{one_of: [...]}`. An argument, or a key of
a map, may add `optional: true` to a matcher: it may then be absent. A map whose keys are
exactly those of a matcher is that matcher; any other map is a literal, and one whose keys all
look like a matcher's (`{regx: p}`) is warned about (`OptionWarning`) when it is compiled.

An expected call's `strings: loose` compares texts as BFCL's checker does (case, spaces and
`, . / - _ * ^` ignored, `'` read as `"`); `numbers: typed` as Python's types do in BFCL (an
int answer takes an int only, a float answer an int or a float); `extra_arguments: forbid`
fails a call with an argument the expected call does not list.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from gradekit.core.errors import OptionError, OptionWarning, did_you_mean, format_path
from gradekit.core.types import ToolCall, as_text
from gradekit.graders.patterns import Pattern
from gradekit.graders.results import Check

__all__ = [
    "CALL_KEYS",
    "ExpectedCall",
    "Matcher",
    "Rules",
    "compile_matcher",
    "expected_calls",
    "expected_calls_from_bfcl",
    "is_number",
    "loose_text",
    "match_calls",
    "tool_name_problem",
]

Matcher = Callable[[Any], "str | None"]
"""`matcher(actual)` -> None when it matches, else why not."""

Path = tuple[str | int, ...]

_MATCHER_KEYS: Final = (
    {"regex"},
    {"contains"},
    {"numeric"},
    {"numeric", "tolerance"},
    {"one_of"},
)
_MATCHER_WORDS: Final = ("regex", "contains", "numeric", "tolerance", "one_of", "optional")
_PEER_MATCHERS: Final = {
    "fuzzy": "HoloDeck's fuzzy match; gradekit's is `strings: loose` on the expected call",
}
"""Another framework's matcher key -> what gradekit writes for it."""
CALL_KEYS: Final = ("name", "arguments", "extra_arguments", "strings", "numbers")
"""The keys of one expected call."""

_LOOSE: Final = re.compile(r"[ ,./\-_*^]")


def is_number(value: Any) -> bool:
    """True for ints and floats, never for booleans."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def loose_text(text: str) -> str:
    """`text` as `strings: loose` compares it: BFCL's `standardize_string` (spaces and
    `, . / - _ * ^` removed, lower case, `'` read as `"`)."""
    return _LOOSE.sub("", text).lower().replace("'", '"')


def tool_name_problem(name: Any) -> str | None:
    """Why `name` cannot name a tool in an option, or None: the one rule for every tool-name
    option (an empty name matches no call, so a forbidden `""` could never fail)."""
    if not isinstance(name, str):
        return f"expected a tool name, got {_show(name)}"
    if not name.strip():
        return f"a tool name cannot be empty or blank, got {name!r}; write the tool's name"
    return None


@attrs.frozen
class Rules:
    """How an expected call's literals compare: `loose` strings, `typed` numbers."""

    loose: bool = False
    typed: bool = False


def _show(value: Any) -> str:
    return (
        repr(value) if isinstance(value, str) else as_text(value) if value is not None else "null"
    )


def compile_matcher(expected: Any, where: Path, rules: Rules = Rules()) -> Matcher:
    """The matcher for `expected`; `where` is the option's path, for OptionError messages."""
    if isinstance(expected, Mapping) and set(expected) in _MATCHER_KEYS:
        if "regex" in expected:
            return _regex(expected["regex"], where)
        if "contains" in expected:
            return _contains(expected["contains"], rules)
        if "one_of" in expected:
            return _one_of(expected["one_of"], (*where, "one_of"), rules)
        return _numeric(expected["numeric"], expected.get("tolerance", 0), where)
    if isinstance(expected, Mapping):
        if _optional_matcher(expected):
            raise OptionError(
                format_path((*where, "optional"), ""),
                "optional applies to an argument or a key of a map, not to a list's item or a "
                "one_of value; remove it",
            )
        _warn_if_misspelt(expected, where)
        return _mapping({str(k): _field(v, (*where, str(k)), rules) for k, v in expected.items()})
    if isinstance(expected, (list, tuple)):
        return _sequence([compile_matcher(v, (*where, i), rules) for i, v in enumerate(expected)])
    return _literal(expected, rules)


def _optional_matcher(expected: Mapping[Any, Any]) -> bool:
    return "optional" in expected and set(expected) - {"optional"} in _MATCHER_KEYS


def _field(expected: Any, where: Path, rules: Rules) -> tuple[Matcher, bool]:
    """An argument's or a map key's matcher, and whether the key may be absent."""
    if isinstance(expected, Mapping) and _optional_matcher(expected):
        optional = expected["optional"]
        if not isinstance(optional, bool):
            raise OptionError(
                format_path((*where, "optional"), ""),
                f"expected true or false, got {_show(optional)}",
            )
        rest = {key: value for key, value in expected.items() if key != "optional"}
        return compile_matcher(rest, where, rules), optional
    return compile_matcher(expected, where, rules), False


def _warn_if_misspelt(expected: Mapping[Any, Any], where: Path) -> None:
    """A literal map whose every key is a matcher's word or close to one (`{regx: p}`,
    `{regex: p, flags: i}` is not: `flags` is no matcher word) is almost surely a matcher
    written wrong: it would only equal that very map."""
    keys = [str(key) for key in expected]
    hints = {
        key: _PEER_MATCHERS.get(key) or did_you_mean(key, _MATCHER_WORDS)
        for key in keys
        if key not in _MATCHER_WORDS
    }
    if not keys or not all(key in _MATCHER_WORDS or hints[key] for key in keys):
        return
    shown = "{" + ", ".join(keys) + "}"
    named = "; ".join(f"'{key}': {hint}" for key, hint in hints.items() if hint)
    advice = f" ({named})" if named else ""
    message = (
        f"{shown} is no matcher, so it is compared as a literal map and matches only that very "
        f"map{advice}; a matcher is one of {{regex}}, {{contains}}, {{numeric, tolerance}}, "
        "{one_of}, each with an optional 'optional'"
    )
    warnings.warn(OptionWarning(where, message), stacklevel=2)


def _literal(expected: Any, rules: Rules) -> Matcher:
    if rules.loose and isinstance(expected, str):
        wanted = loose_text(expected)

        def loose(actual: Any) -> str | None:
            if isinstance(actual, str) and loose_text(actual) == wanted:
                return None
            return f"expected {_show(expected)} (loose), got {_show(actual)}"

        return loose

    def match(actual: Any) -> str | None:
        if isinstance(expected, bool) or isinstance(actual, bool):
            same = isinstance(actual, bool) and isinstance(expected, bool) and actual is expected
        elif rules.typed and isinstance(expected, int):
            same = isinstance(actual, int) and actual == expected
        elif is_number(expected):
            same = is_number(actual) and actual == expected
        else:
            same = type(actual) is type(expected) and actual == expected
        return None if same else f"expected {_show(expected)}, got {_show(actual)}"

    return match


def _mapping(fields: dict[str, tuple[Matcher, bool]]) -> Matcher:
    required = {key for key, (_, optional) in fields.items() if not optional}

    def match(actual: Any) -> str | None:
        if not isinstance(actual, Mapping):
            return f"expected a map, got {_show(actual)}"
        keys = set(actual)
        if not required <= keys <= set(fields):
            return f"expected keys {sorted(fields)}, got {sorted(map(str, actual))}"
        for key, (matcher, _) in fields.items():
            reason = matcher(actual[key]) if key in actual else None
            if reason is not None:
                return f"{key}: {reason}"
        return None

    return match


def _sequence(items: list[Matcher]) -> Matcher:
    def match(actual: Any) -> str | None:
        if not isinstance(actual, (list, tuple)):
            return f"expected a list, got {_show(actual)}"
        if len(actual) != len(items):
            return f"expected {len(items)} items, got {len(actual)}"
        for index, (matcher, value) in enumerate(zip(items, actual, strict=True)):
            reason = matcher(value)
            if reason is not None:
                return f"[{index}]: {reason}"
        return None

    return match


def _one_of(values: Any, where: Path, rules: Rules) -> Matcher:
    if not isinstance(values, (list, tuple)) or not values:
        raise OptionError(
            format_path(where, ""),
            f"expected a non-empty list of values, got {_show(_as_list(values))}",
        )
    matchers = [compile_matcher(value, (*where, i), rules) for i, value in enumerate(values)]
    shown = ", ".join(_show(value) for value in values)

    def match(actual: Any) -> str | None:
        if any(matcher(actual) is None for matcher in matchers):
            return None
        return f"expected one of [{shown}], got {_show(actual)}"

    return match


def _as_list(value: Any) -> Any:
    """A list option's value as written (options are frozen: their lists are tuples)."""
    return list(value) if isinstance(value, tuple) else value


def _regex(pattern: Any, where: Path) -> Matcher:
    option = format_path((*where, "regex"), "")
    if not isinstance(pattern, str):
        raise OptionError(option, f"expected a pattern string, got {_show(pattern)}")
    compiled = Pattern(pattern, option)

    def match(actual: Any) -> str | None:
        if (
            isinstance(actual, (Mapping, list, tuple))
            or compiled.fullmatch(as_text(actual)) is None
        ):
            return f"{_show(actual)} does not match /{pattern}/"
        return None

    return match


def _contains(part: Any, rules: Rules) -> Matcher:
    literal = _literal(part, rules)

    def match(actual: Any) -> str | None:
        if isinstance(actual, str):
            found = as_text(part) in actual
        elif isinstance(actual, Mapping):
            found = part in actual
        elif isinstance(actual, (list, tuple)):
            found = any(literal(item) is None for item in actual)
        else:
            found = False
        return None if found else f"{_show(actual)} does not contain {_show(part)}"

    return match


def _numeric(target: Any, tolerance: Any, where: Path) -> Matcher:
    for key, value in (("numeric", target), ("tolerance", tolerance)):
        if not is_number(value) or not math.isfinite(value):
            raise OptionError(
                format_path((*where, key), ""), f"expected a number, got {_show(value)}"
            )
    if tolerance < 0:
        raise OptionError(
            format_path((*where, "tolerance"), ""), f"must be >= 0, got {tolerance!r}"
        )

    def match(actual: Any) -> str | None:
        number = actual if is_number(actual) else _parse(actual)
        # `not <=`: NaN is within no tolerance of anything (`abs(nan - t) > tol` is False).
        if number is None or not abs(number - target) <= tolerance:
            return f"expected {target} ± {tolerance}, got {_show(actual)}"
        return None

    return match


def _parse(value: Any) -> float | None:
    """Numeric text (agents often pass numbers as strings) as a float, else None."""
    if not isinstance(value, str):
        return None
    try:
        number = float(value.strip().replace(",", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


# -- expected calls ----------------------------------------------------------------------------


@attrs.frozen
class ExpectedCall:
    """One compiled expected call: its tool's name, each listed argument's matcher and whether
    it may be absent, and whether arguments it does not list fail the call."""

    name: str
    arguments: dict[str, tuple[Matcher, bool]]
    forbid_extra: bool = False

    def mismatch(self, call: ToolCall) -> str | None:
        """Why `call` is not this expected call (its name is not checked), or None."""
        arguments = call.arguments
        for key, (matcher, optional) in self.arguments.items():
            if key not in arguments:
                if optional:
                    continue
                return f"argument '{key}' missing"
            reason = matcher(arguments[key])
            if reason is not None:
                return f"argument '{key}': {reason}"
        if self.forbid_extra:
            extra = sorted(str(key) for key in arguments if key not in self.arguments)
            if extra:
                return f"argument '{extra[0]}' not expected (extra_arguments: forbid)"
        return None


_CHOICES: Final = {
    "extra_arguments": ("allow", "forbid"),
    "strings": ("exact", "loose"),
    "numbers": ("value", "typed"),
}


def expected_calls(items: Sequence[Mapping[str, Any]]) -> tuple[ExpectedCall, ...]:
    """The option `expected_calls` compiled; an OptionError names the key at fault."""
    calls = []
    for index, item in enumerate(items):
        where: Path = ("expected_calls", index)
        text = format_path(where, "")
        unknown = sorted(set(item) - set(CALL_KEYS))
        if unknown:
            raise OptionError(
                text,
                f"unknown key {unknown[0]!r}; an expected call takes " + ", ".join(CALL_KEYS),
            )
        for key, choices in _CHOICES.items():
            if item.get(key, choices[0]) not in choices:
                raise OptionError(
                    f"{text}.{key}",
                    f"expected {' or '.join(choices)}, got {_show(item[key])}",
                )
        name = item.get("name")
        problem = tool_name_problem(name)
        if problem is not None:
            raise OptionError(
                f"{text}.name", f"each expected call needs the tool's name: {problem}"
            )
        arguments = item.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise OptionError(f"{text}.arguments", f"expected a map, got {arguments!r}")
        rules = Rules(item.get("strings") == "loose", item.get("numbers") == "typed")
        matchers = {
            str(key): _field(value, (*where, "arguments", str(key)), rules)
            for key, value in arguments.items()
        }
        calls.append(ExpectedCall(str(name), matchers, item.get("extra_arguments") == "forbid"))
    return tuple(calls)


MatchMode = Literal["each", "any_order", "in_order"]


def match_calls(
    expected: Sequence[ExpectedCall], calls: Sequence[ToolCall], mode: MatchMode
) -> list[Check]:
    """The checks of `expected_calls` over `calls`.

    `each`: one check per expected call, passed when some call matches it (other calls are
    allowed, and one call may match several). `any_order`: the calls are the expected ones,
    one each, in any order (a count check, then one check per expected call, matched one to
    one). `in_order`: the same, the n-th call matching the n-th expected call.
    """
    if mode == "each":
        return [_each(item, calls) for item in expected]
    labels = _labels(expected)
    count = Check(
        "expected_calls count",
        len(calls) == len(expected),
        f"{len(calls)} tool calls (expected exactly {len(expected)})",
    )
    if mode == "in_order":
        checks = [count]
        for index, item in enumerate(expected):
            if index >= len(calls):
                checks.append(Check(labels[index], False, f"no tool call #{index + 1}"))
                continue
            call = calls[index]
            reason = (
                f"'{call.name}' called instead" if call.name != item.name else item.mismatch(call)
            )
            message = f"tool call #{index + 1}: {reason}" if reason else f"tool call #{index + 1}"
            checks.append(Check(labels[index], reason is None, message))
        return checks
    return [count, *_one_to_one(expected, calls, labels)]


def _labels(expected: Sequence[ExpectedCall]) -> list[str]:
    """`expected call NAME`, numbered (`#2`) when NAME is expected more than once."""
    names = [item.name for item in expected]
    labels = []
    for index, name in enumerate(names):
        if names.count(name) == 1:
            labels.append(f"expected call {name}")
        else:
            labels.append(f"expected call {name} #{names[: index + 1].count(name)}")
    return labels


def _each(expected: ExpectedCall, calls: Sequence[ToolCall]) -> Check:
    label = f"expected call {expected.name}"
    candidates = [(index, call) for index, call in enumerate(calls) if call.name == expected.name]
    if not candidates:
        return Check(label, False, f"'{expected.name}' never called")
    first_reason = ""
    for index, call in candidates:
        reason = expected.mismatch(call)
        if reason is None:
            return Check(label, True, f"matched tool call #{index + 1}")
        first_reason = first_reason or reason
    count = len(candidates)
    return Check(
        label,
        False,
        f"none of {count} call(s) to '{expected.name}' matched; first: {first_reason}",
    )


def _one_to_one(
    expected: Sequence[ExpectedCall], calls: Sequence[ToolCall], labels: list[str]
) -> list[Check]:
    """Expected calls matched to calls one to one, as many as can be (augmenting paths: a
    matching is found whenever one exists, whatever the order of the calls)."""
    fits: list[list[int]] = []
    reasons: list[str] = []
    for item in expected:
        fit = []
        reason = ""
        for index, call in enumerate(calls):
            if call.name != item.name:
                continue
            why = item.mismatch(call)
            if why is None:
                fit.append(index)
            else:
                reason = reason or why
        fits.append(fit)
        reasons.append(reason)
    owner: dict[int, int] = {}

    def claim(wanted: int, seen: set[int]) -> bool:
        for index in fits[wanted]:
            if index in seen:
                continue
            seen.add(index)
            if index not in owner or claim(owner[index], seen):
                owner[index] = wanted
                return True
        return False

    for wanted in range(len(expected)):
        claim(wanted, set())
    matched = {wanted: index for index, wanted in owner.items()}
    checks = []
    for wanted, item in enumerate(expected):
        if wanted in matched:
            message = f"matched tool call #{matched[wanted] + 1}"
        elif fits[wanted]:
            message = "every call that matches it matches another expected call"
        elif reasons[wanted]:
            message = f"no call to '{item.name}' matched; first: {reasons[wanted]}"
        else:
            message = f"'{item.name}' never called"
        checks.append(Check(labels[wanted], wanted in matched, message))
    return checks


# -- BFCL --------------------------------------------------------------------------------------


def expected_calls_from_bfcl(
    ground_truth: Iterable[Mapping[str, Mapping[str, Sequence[Any]]]],
    functions: Iterable[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """BFCL's answer key for one problem as `expected_calls` (plain data, as YAML writes it).

    `ground_truth` is a possible_answer line's `ground_truth`: `[{function: {argument:
    [acceptable values]}}]`, `""` among the values marking the argument optional. Each
    argument becomes `{one_of: [...]}` (with `optional: true`), each call takes
    `extra_arguments: forbid`, `strings: loose` and `numbers: typed`. `functions` (the
    problem's `function` list from BFCL's question file) makes a float parameter's int answers
    floats (BFCL takes an int for a float) and a required parameter never optional. Grade with
    `expected_calls_match: any_order`, which is BFCL's rule in every AST category.
    """
    declared = {function.get("name"): function.get("parameters") or {} for function in functions}
    calls = []
    for answer in ground_truth:
        for name, arguments in answer.items():
            parameters = declared.get(name, {})
            types = parameters.get("properties") or {}
            required = set(parameters.get("required") or ())
            converted = {
                str(key): _bfcl_argument(values, types[key].get("type"), key in required)
                if key in types
                else _bfcl_argument(values, None, False)
                for key, values in arguments.items()
                # BFCL refuses an argument the function does not declare, even one its answer
                # lists as optional: left out, `extra_arguments: forbid` refuses it too.
                if not (types and key not in types and "" in values)
            }
            calls.append(
                {
                    "name": name,
                    "arguments": converted,
                    "extra_arguments": "forbid",
                    "strings": "loose",
                    "numbers": "typed",
                }
            )
    return calls


def _bfcl_argument(values: Sequence[Any], kind: str | None, required: bool) -> dict[str, Any]:
    """`{one_of: [...], optional: true}` for BFCL's list of acceptable values (`""` = may be
    absent; `""` itself is a value only where the other values are texts, as in BFCL)."""
    given = [value for value in values if value != ""]
    texts = all(isinstance(value, str) for value in given)
    kept = [_bfcl_value(value, kind) for value in given]
    if len(given) < len(values) and (texts or kind == "string"):
        kept.append("")
    field: dict[str, Any] = {"one_of": kept or [""]}
    if len(given) < len(values) and not required:
        field["optional"] = True
    return field


def _bfcl_value(value: Any, kind: str | None) -> Any:
    """One acceptable value: a map's values are lists of acceptable values themselves. A text
    answer for a parameter that is not text names a variable (`data['sales']` for an array),
    which BFCL compares exactly: a full match of the escaped text."""
    if kind == "float" and is_number(value):
        return float(value)
    if isinstance(value, str) and kind not in (None, "string", "any", "literal"):
        return {"regex": re.escape(value)}
    if isinstance(value, Mapping) and kind != "literal":
        # A value inside a map's list of values is compared as it is (BFCL's dict_checker).
        return {str(key): _bfcl_argument(inner, "literal", False) for key, inner in value.items()}
    if isinstance(value, list) and kind != "literal":
        return [_bfcl_value(item, None) for item in value]
    return value
