"""The `json` kind: the output parses as JSON, optionally matches a schema and equals the expected.

Schema validation uses the optional jsonschema library (`pip install 'gradekit[json]'`),
imported only when a grader with a `schema` is created. The schema's patterns (`pattern`,
`patternProperties`, and `additionalProperties` beside them) are matched under the time limit
of every user pattern (`gradekit.graders.patterns`), not with jsonschema's `re`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import attrs

from gradekit.core.errors import OptionError, PatternTimeoutError
from gradekit.core.types import GradeResult, Sample, as_text, bounded, thaw, well_formed
from gradekit.graders.patterns import Pattern
from gradekit.graders.results import data_error, expected_missing, quote, rebuilt

__all__ = ["FORMAT_PACKAGES", "Json"]

SHOWN_SCHEMA_ERRORS: Final = 20
"""At most this many schema errors are kept in a result's details."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # `1e400`: no float holds it, and it would equal every other
        raise ValueError(f"the number {text} is too large for a float")
    return value


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
_decode: Final = _DECODER.decode
"""`json.loads(text, parse_constant=..., parse_float=...)` without building a decoder at
each call."""

_FENCE: Final = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
"""A Markdown code fence (its info string, such as `json`, ignored) and what it holds."""
_MOST_OPENINGS: Final = 1000
"""`extract` tries at most this many `{` (then `[`) in prose, so a grade stays fast."""


def _parse(text: str) -> Any:
    """Strict JSON: `NaN` and `Infinity` are refused, as the JSON standard does, and so is a
    number too large for a float (`1e400` would read as infinity)."""
    if text.startswith("\ufeff"):
        return json.loads(  # its own BOM error
            text, parse_constant=_reject_constant, parse_float=_finite_float
        )
    return _decode(text)


def _extracted(text: str) -> tuple[Any, str] | None:
    """(the first JSON value in `text`, where it was found), or None: the whole text, else
    the first code fence that holds JSON, else the first object inside the prose, else its
    first array (so a citation such as `[1]` before an object is not taken for the answer)."""
    try:
        return _parse(text.strip()), "the output"
    except (ValueError, RecursionError):
        pass
    for fence in _FENCE.finditer(text):
        try:
            return _parse(fence[1].strip()), "a code fence"
        except (ValueError, RecursionError):
            continue
    for opening in "{[":
        start = text.find(opening)
        for _ in range(_MOST_OPENINGS):
            if start < 0:
                break
            try:
                return _DECODER.raw_decode(text, start)[0], "the text"
            except (ValueError, RecursionError):
                start = text.find(opening, start + 1)
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:59] + "…"


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else type(value).__name__


def _step(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """Where and how `actual` differs from `expected` as JSON values; None when equal.

    JSON equality, not Python's: `true` is not `1`, while `1` equals `1.0`.
    """
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"at {path}: expected an object, got {_type_name(actual)}"
        for key in expected:
            if key not in actual:
                return f"at {path}: missing key {json.dumps(key)}"
        for key in actual:
            if key not in expected:
                return f"at {path}: unexpected key {json.dumps(key)}"
        for key, item in expected.items():
            found = _difference(item, actual[key], _step(path, str(key)))
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"at {path}: expected an array, got {_type_name(actual)}"
        if len(actual) != len(expected):
            return f"at {path}: expected {len(expected)} items, got {len(actual)}"
        for index, (item, other) in enumerate(zip(expected, actual, strict=True)):
            found = _difference(item, other, f"{path}[{index}]")
            if found:
                return found
        return None
    same_type = _type_name(expected) == _type_name(actual) or (
        isinstance(expected, bool) and isinstance(actual, bool)
    )
    if same_type and expected == actual:
        return None
    return f"at {path}: expected {_shown(expected)}, got {_shown(actual)}"


FORMAT_PACKAGES: Final = {
    "hostname": "fqdn",
    "host-name": "fqdn",
    "idn-hostname": "idna",
    "uri": "rfc3987 or rfc3986-validator",
    "uri-reference": "rfc3987 or rfc3986-validator",
    "iri": "rfc3987 or rfc3987-syntax",
    "iri-reference": "rfc3987 or rfc3987-syntax",
    "date-time": "rfc3339-validator",
    "time": "rfc3339-validator",
    "duration": "isoduration",
    "json-pointer": "jsonpointer",
    "relative-json-pointer": "jsonpointer",
    "uri-template": "uri-template",
    "color": "webcolors",
}
"""The formats jsonschema checks only when another package is installed, and that package."""

# Keywords whose values are data, not schemas: a `format` key inside them is no format.
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})


def _formats(schema: Any) -> set[str]:
    """Every `format` the schema (and its subschemas) asks for."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("format"), str):
                found.add(node["format"])
            stack.extend(value for key, value in node.items() if key not in _DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _format_checker(validator_class: Any, schema: dict[str, Any]) -> Any:
    """The draft's format checker; OptionError when the schema asks for a format that it
    checks only with a package that is not installed (it would pass every string)."""
    checker = validator_class.FORMAT_CHECKER
    unchecked = sorted(
        name
        for name in _formats(schema)
        if name in FORMAT_PACKAGES and name not in checker.checkers
    )
    if unchecked:
        needs = "; ".join(f"'{name}' needs {FORMAT_PACKAGES[name]}" for name in unchecked)
        raise OptionError(
            "schema",
            f"the schema's format {', '.join(repr(name) for name in unchecked)} cannot be "
            f"checked here ({needs}); install the package (pip install "
            "'jsonschema[format-nongpl]' installs them all), or set check_formats: false to "
            "leave formats unchecked",
        )
    return checker


def _compile(schema: dict[str, Any], check_formats: bool) -> Any:
    """A jsonschema validator for `schema` (checking its formats when asked); OptionError if
    it is invalid, jsonschema is missing, or a format it asks for cannot be checked."""
    try:
        import jsonschema
    except ImportError:
        raise OptionError(
            "schema",
            "validating against a schema needs the jsonschema library; install it with "
            "pip install 'gradekit[json]'",
        ) from None
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.exceptions.SchemaError as error:
        raise OptionError(
            "schema",
            f"invalid JSON Schema at {error.json_path}: {error.message}; fix the schema",
        ) from None
    checker = _format_checker(validator_class, schema) if check_formats else None
    return _with_patterns(jsonschema, validator_class)(schema, format_checker=checker)


def _with_patterns(jsonschema: Any, validator_class: Any) -> Any:
    """`validator_class` with the keywords that match patterns matching them by `Pattern`
    (jsonschema's own use `re`, which can backtrack for hours: `gradekit.graders.patterns`).
    The same checks and messages as jsonschema 4's."""
    compiled: dict[str, Pattern] = {}

    def search(pattern: str, text: str) -> bool:
        found = compiled.get(pattern)
        if found is None:
            found = compiled[pattern] = Pattern(pattern, "schema")
        return found.search(text) is not None

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not search(patrn, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                if search(patrn, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(validator: Any, aP: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = {
            key
            for key in instance
            if key not in properties and not any(search(patrn, key) for patrn in patterns)
        }
        if validator.is_type(aP, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], aP, path=extra)
        elif not aP and extras:
            if patterns:
                verb = "does" if len(extras) == 1 else "do"
                joined = ", ".join(repr(each) for each in sorted(extras))
                listed = ", ".join(repr(each) for each in sorted(patterns))
                yield jsonschema.ValidationError(
                    f"{joined} {verb} not match any of the regexes: {listed}"
                )
            else:
                names = sorted(extras, key=str)
                were = "was" if len(names) == 1 else "were"
                shown = ", ".join(repr(name) for name in names)
                yield jsonschema.ValidationError(
                    f"Additional properties are not allowed ({shown} {were} unexpected)"
                )

    keywords = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }
    present = {key: value for key, value in keywords.items() if key in validator_class.VALIDATORS}
    return jsonschema.validators.extend(validator_class, present)


@attrs.frozen
class Json:
    """Passes when the output parses as JSON and, when asked, matches `schema` and equals
    the expected value (`equals_expected`; an expected string is parsed as JSON too).

    An output that is not JSON fails. A `schema` needs the jsonschema library and is checked
    when the grader is created: an invalid schema is a ConfigError. Inline (pure CPU work,
    graded in the runner's batches, which time out a long grade like any other).
    """

    kind: ClassVar[str] = "json"
    inline: ClassVar[bool] = True

    name: str = attrs.field(kw_only=True, default="json")
    # Left out of the hash (a dict is unhashable) so a json grader can still be a dict key.
    schema: dict[str, Any] | None = attrs.field(kw_only=True, default=None, hash=False)
    """A JSON Schema (as a YAML mapping) the parsed output must match."""
    equals_expected: bool = attrs.field(kw_only=True, default=False)
    """The parsed output must equal the expected value."""
    extract: bool = attrs.field(kw_only=True, default=False)
    """Read the first JSON value in the text (the whole output, a code fence, the prose)."""
    check_formats: bool = attrs.field(kw_only=True, default=True)
    """Check the schema's `format` keywords; false treats them as annotations."""
    _validator: Any = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(
            self,
            "_validator",
            None if self.schema is None else _compile(self.schema, self.check_formats),
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its options: the schema validator is rebuilt from them."""
        return rebuilt(self)

    @bounded
    @well_formed
    def grade(self, sample: Sample) -> GradeResult:
        """Parse the output as JSON, then check the schema and the expected value if asked."""
        read = self._read(sample.output)
        if isinstance(read, GradeResult):
            return read
        value, parsed = read
        if self._validator is None and not self.equals_expected:  # the usual: parsing only
            return GradeResult("json", self.name, True, 1.0, parsed, None)
        passed_parts = [parsed]
        failed_parts: list[str] = []
        details: dict[str, Any] = {}
        try:
            if self._validator is not None:
                errors = self._schema_errors(value)
                details["schema_errors"] = errors[:SHOWN_SCHEMA_ERRORS]
                if errors:
                    first = errors[0]
                    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
                    failed_parts.append(
                        f"output does not match the schema at {first['path']}: "
                        f"{first['message']}{more}"
                    )
                else:
                    passed_parts.append("matches the schema")
            if self.equals_expected:
                expected = self._expected(sample)
                if isinstance(expected, GradeResult):
                    return expected
                difference = _difference(expected, value)
                details["difference"] = difference
                if difference:
                    failed_parts.append(f"output differs from the expected value {difference}")
                else:
                    passed_parts.append("equals the expected value")
        except RecursionError:
            return data_error("json", self.name, "the JSON value is nested too deeply to check")
        except PatternTimeoutError as error:
            return GradeResult.of_error("json", self.name, error)
        if failed_parts:
            return GradeResult("json", self.name, False, 0.0, "; ".join(failed_parts), details)
        if len(passed_parts) > 1:
            message = ", ".join(passed_parts[:-1]) + " and " + passed_parts[-1]
        else:
            message = passed_parts[0]
        return GradeResult("json", self.name, True, 1.0, message, details or None)

    def _read(self, output: Any) -> tuple[Any, str] | GradeResult:
        """(the output's JSON value, what the passing message says of it), or the failure."""
        parsed = "output is valid JSON"
        if type(output) is not str and isinstance(output, (Mapping, tuple)):
            return thaw(output), parsed  # already structured (a YAML or JSONL value)
        text = output if type(output) is str else as_text(output)
        if self.extract:
            found = _extracted(text)
            if found is None:
                message = f"no JSON value in the output, nor in a code fence: {quote(text)}"
                reason = "no JSON value found"
                return GradeResult("json", self.name, False, 0.0, message, {"reason": reason})
            value, where = found
            return value, parsed if where == "the output" else f"output holds valid JSON in {where}"
        try:
            return _parse(text), parsed
        except (ValueError, RecursionError) as error:
            reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            message = f"output is not valid JSON ({reason}): {quote(text)}"
            if ("{" in text or "[" in text) and _extracted(text) is not None:
                message += "; set extract: true to read JSON inside text or a code fence"
            return GradeResult("json", self.name, False, 0.0, message, {"reason": reason})

    def _schema_errors(self, value: Any) -> list[dict[str, str]]:
        from jsonschema.exceptions import relevance

        # Most relevant first, so errors[0] is what jsonschema's best_match would pick.
        errors = sorted(self._validator.iter_errors(value), key=relevance, reverse=True)
        return [{"path": error.json_path, "message": error.message} for error in errors]

    def _expected(self, sample: Sample) -> Any:
        """The expected value as JSON data, or the error result when there is none."""
        expected = sample.expected
        if expected is None:
            return expected_missing("json", self.name)
        if not isinstance(expected, str):
            return thaw(expected)
        try:
            return _parse(expected)
        except (ValueError, RecursionError) as error:
            return data_error(
                "json",
                self.name,
                f"the expected value is not valid JSON ({error}): {quote(expected)}; write it "
                "as JSON text or as a YAML value",
            )
