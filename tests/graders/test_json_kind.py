"""The `json` kind: parse, schema (optional jsonschema), equality with the expected value."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import gradekit
from gradekit import GradeResult, Sample

PERSON = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
}


def grade(output: Any, expected: Any = None, **options: Any) -> GradeResult:
    return gradekit.create("json", config=options).grade(Sample(output=output, expected=expected))


def test_output_must_parse_as_json() -> None:
    assert grade('{"a": [1, 2]}').message == "output is valid JSON"
    result = grade("{a: 1}")
    assert (result.outcome, result.score) == ("fail", 0.0)
    assert result.message == (
        "output is not valid JSON (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)): '{a: 1}'"
    )


@pytest.mark.parametrize("output", ["NaN", "[Infinity]", "-Infinity", ""])
def test_strict_json(output: str) -> None:
    assert grade(output).outcome == "fail"


@pytest.mark.parametrize("output", ["1e400", "[-1e400]", '{"a": 1e999}'])
def test_a_number_too_large_for_a_float_is_not_read_as_infinity(output: str) -> None:
    # Read as infinity, `1e400` equalled `1e999` and `{"a": 1e999}` was "valid JSON".
    result = grade(output, expected=output.replace("1e400", "1e999"), equals_expected=True)
    assert result.outcome == "fail"
    assert "too large for a float" in result.message
    assert grade("[1e308, 123456789012345678901234567890]").outcome == "pass"  # in range


def test_deeply_nested_output_fails_without_crashing() -> None:
    result = grade("[" * 100_000 + "]" * 100_000)
    assert result.outcome == "fail"
    assert result.message.startswith("output is not valid JSON (nested too deeply)")


def test_structured_output_is_taken_as_parsed() -> None:
    assert grade({"name": "Ada", "age": 36}, schema=PERSON).passed


def test_schema() -> None:
    result = grade('{"name": "Ada", "age": "36"}', schema=PERSON)
    assert result.outcome == "fail"
    assert (
        result.message == "output does not match the schema at $.age: '36' is not of type 'integer'"
    )
    # Most relevant first, as jsonschema's best_match ranks them.
    result = grade('{"age": "x"}', schema=PERSON)
    assert result.message == (
        "output does not match the schema at $: 'name' is a required property (and 1 more)"
    )
    assert result.details == {
        "schema_errors": [
            {"path": "$", "message": "'name' is a required property"},
            {"path": "$.age", "message": "'x' is not of type 'integer'"},
        ]
    }
    result = grade('{"name": "Ada", "age": 36}', schema=PERSON)
    assert (result.outcome, result.message) == (
        "pass",
        "output is valid JSON and matches the schema",
    )


def test_invalid_schema_is_a_config_error() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("json", config={"schema": {"type": "strng"}})
    assert str(caught.value) == (
        "invalid options for kind 'json'\n$.schema: invalid JSON Schema at $.type: 'strng' is "
        "not valid under any of the given schemas; fix the schema"
    )


def test_without_jsonschema_a_schema_is_a_config_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # makes `import jsonschema` fail
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("json", config={"schema": PERSON})
    assert str(caught.value) == (
        "invalid options for kind 'json'\n$.schema: validating against a schema needs the "
        "jsonschema library; install it with pip install 'gradekit[json]'"
    )
    assert gradekit.create("json").grade(Sample(output="[]")).passed


def test_equals_expected_parses_a_string_expected_value() -> None:
    result = grade('{"a": [1, 2.0]}', '{"a": [1.0, 2]}', equals_expected=True)
    assert (result.outcome, result.message) == (
        "pass",
        "output is valid JSON and equals the expected value",
    )


def test_equals_expected_with_a_yaml_value() -> None:
    assert grade('{"a": [1, "x"]}', {"a": [1, "x"]}, equals_expected=True).passed


@pytest.mark.parametrize(
    ("output", "expected", "difference"),
    [
        ('{"a": true}', {"a": 1}, "at $.a: expected 1, got true"),
        ('{"a": 1}', {"a": 1, "b": 2}, 'at $: missing key "b"'),
        ('{"a": 1, "c": 3}', {"a": 1}, 'at $: unexpected key "c"'),
        ('{"a": [1]}', {"a": [1, 2]}, "at $.a: expected 2 items, got 1"),
        (
            '{"my key": "x"}',
            {"my key": {"b": 1}},
            'at $["my key"]: expected an object, got a string',
        ),
        ("[null]", [0], "at $[0]: expected 0, got null"),
        ('"1"', 1, 'at $: expected 1, got "1"'),
    ],
)
def test_equals_expected_names_the_first_difference(
    output: str, expected: Any, difference: str
) -> None:
    result = grade(output, expected, equals_expected=True)
    assert result.outcome == "fail"
    assert result.message == f"output differs from the expected value {difference}"
    assert result.details == {"difference": difference}


def test_schema_and_expected_failures_are_both_reported() -> None:
    result = grade(
        '{"name": 1, "age": 2}', {"name": "x", "age": 2}, schema=PERSON, equals_expected=True
    )
    assert result.message == (
        "output does not match the schema at $.name: 1 is not of type 'string'; "
        'output differs from the expected value at $.name: expected "x", got 1'
    )


def test_expected_value_problems_are_errors() -> None:
    result = grade("{}", None, equals_expected=True)
    assert result.outcome == "error"
    assert result.message == (
        "no expected value: json compares the output with the sample's expected value; "
        "add 'expected' to the case or turn"
    )
    result = grade("{}", "{oops", equals_expected=True)
    assert result.outcome == "error"
    assert result.message == (
        "the expected value is not valid JSON (Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)): '{oops'; write it as JSON text or as a YAML value"
    )


def test_a_json_grader_with_a_schema_is_hashable_and_comparable() -> None:
    grader = gradekit.create("json", config={"schema": PERSON})
    assert grader == gradekit.create("json", config={"schema": PERSON})
    assert {grader: 1}[grader] == 1


# -- extract: the first JSON value in text or a code fence (issue 34) --------------------------


@pytest.mark.parametrize(
    ("output", "value", "message"),
    [
        ('{"a": 1}', {"a": 1}, "output is valid JSON"),
        ("  [1, 2]\n", [1, 2], "output is valid JSON"),
        (
            'Here it is:\n```json\n{"a": 1}\n```\nAnything else?',
            {"a": 1},
            "output holds valid JSON in a code fence",
        ),
        ('```\n"just a string"\n```', '"just a string"', "output holds valid JSON in a code fence"),
        (
            "```python\nprint(1)\n```\n```json\n[true]\n```",
            [True],
            "output holds valid JSON in a code fence",
        ),
        ('Sure! {"a": 1} Hope that helps.', {"a": 1}, "output holds valid JSON in the text"),
        ('See [1]. The answer: {"a": 1}', {"a": 1}, "output holds valid JSON in the text"),
        ('Not {this}, but {"a": 1} and {"b": 2}', {"a": 1}, "output holds valid JSON in the text"),
        ("The list: [1, 2] and more", [1, 2], "output holds valid JSON in the text"),
    ],
)
def test_extract_reads_the_first_json_value(output: str, value: Any, message: str) -> None:
    result = grade(output, value, extract=True, equals_expected=True)
    assert result.passed, result.message
    assert result.message == f"{message} and equals the expected value"
    assert grade(output, extract=True).message == message


def test_extract_fails_when_the_text_holds_no_json() -> None:
    result = grade("No JSON {here} at all", extract=True)
    assert result.outcome == "fail"
    assert (
        result.message
        == "no JSON value in the output, nor in a code fence: 'No JSON {here} at all'"
    )


def test_without_extract_json_in_prose_fails_with_a_hint() -> None:
    result = grade('Sure! {"a": 1}')
    assert result.outcome == "fail"
    assert result.message == (
        "output is not valid JSON (Expecting value: line 1 column 1 (char 0)): 'Sure! {\"a\": 1}'; "
        "set extract: true to read JSON inside text or a code fence"
    )


def test_extract_then_schema() -> None:
    result = grade('```json\n{"name": "Ada"}\n```', extract=True, schema=PERSON)
    assert result.outcome == "fail"
    assert result.message == ("output does not match the schema at $: 'age' is a required property")


# -- format: checked with jsonschema's format checker (issue 34) -------------------------------


@pytest.mark.parametrize(
    ("format_", "good", "bad"),
    [
        ("date", "2024-02-29", "2024-02-30"),
        ("email", "ada@example.org", "ada.example.org"),
        ("ipv4", "192.0.2.1", "192.0.2.256"),
        ("uuid", "12345678-1234-5678-1234-567812345678", "1234"),
    ],
)
def test_formats_are_checked(format_: str, good: str, bad: str) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "format": format_}}}
    assert grade({"x": good}, schema=schema).passed
    result = grade({"x": bad}, schema=schema)
    assert result.outcome == "fail"
    assert result.message == (
        f"output does not match the schema at $.x: {bad!r} is not a {format_!r}"
    )
    # The earlier behaviour (formats as annotations only) is an option away.
    assert grade({"x": bad}, schema=schema, check_formats=False).passed


def test_a_format_unknown_to_jsonschema_is_an_annotation() -> None:
    schema = {"properties": {"x": {"format": "phone"}}}
    assert grade({"x": "not a phone"}, schema=schema).passed


def test_a_format_whose_package_is_missing_is_a_config_error_else_checked() -> None:
    import jsonschema

    schema = {"properties": {"at": {"format": "date-time"}, "home": {"format": "uri"}}}
    checkers = jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers
    if "date-time" in checkers and "uri" in checkers:  # rfc3339-validator and a URI package
        assert not grade({"at": "yesterday", "home": "x"}, schema=schema).passed
        return
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("json", config={"schema": schema})
    message = str(caught.value)
    assert message.startswith("invalid options for kind 'json'\n$.schema: the schema's format ")
    assert message.endswith(
        "install the package (pip install 'jsonschema[format-nongpl]' installs them all), "
        "or set check_formats: false to leave formats unchecked"
    )
    assert "'date-time' needs rfc3339-validator" in message or "date-time" in checkers
    assert gradekit.create("json", config={"schema": schema, "check_formats": False})


def test_a_format_key_inside_data_is_not_a_format() -> None:
    schema = {"const": {"format": "uri"}}
    assert grade({"format": "uri"}, schema=schema).passed
