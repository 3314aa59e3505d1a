"""A sweep of malformed suite files: each is one clean ConfigError whose problems name the file
(and, past reading it, the line and column), never another exception. The fragment is the
part of the message that tells the user what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

import gradekit
from gradekit import ConfigError

ENTRY = b"graders: [{kind: equality}]\n"

MALFORMED: list[tuple[str, bytes, str]] = [
    ("empty file", b"", "a suite file is a mapping with 'cases' or 'dataset', got None"),
    ("only a comment", b"# nothing here\n", "a suite file is a mapping"),
    ("a list at the top", b"- a\n- b\n", "got ['a', 'b'] (list)"),
    ("a scalar at the top", b"hello\n", "got 'hello'"),
    ("a lone dash", b"-\n", "got [None] (list)"),
    ("no cases", b"name: x\n" + ENTRY, "the suite has no cases"),
    ("empty case list", ENTRY + b"cases: []\n", "the suite has no cases"),
    ("cases without value", ENTRY + b"cases:\n", "the suite has no cases"),
    ("a dataset of null", ENTRY + b"dataset: ~\n", "the suite has no cases"),
    ("no cases, a blank dataset", ENTRY + b"cases: []\ndataset:\n", "the suite has no cases"),
    ("BOM then bad YAML", b"\xef\xbb\xbfcases: [\n", "invalid YAML"),
    ("tab indentation", b"cases:\n\t- output: a\n", "found character '\\t'"),
    ("binary junk", bytes(range(256)) * 4, "is not UTF-8 text (byte 128)"),
    ("UTF-16", "cases: []\n".encode("utf-16"), "is not UTF-8 text"),
    ("a control character", b'cases: [{output: "a\x01"}]\n', "unacceptable character #x0001"),
    ("a NUL byte", b"cases: [\x00]\n", "unacceptable character #x0000"),
    ("a huge single line", b"a" * 5_000_000 + b"\n", "got 'aaaa"),
    ("a unicode top-level key", "ñame: x\n".encode() + ENTRY + b"cases: [{}]\n", "'ñame'"),
    ("keys that are not text", b"1: x\nnull: y\n" + ENTRY + b"cases: [{}]\n", "key 'None'"),
    ("an unhashable key", b"? [a]\n: b\n", "found unhashable key"),
    ("two documents", b"a: 1\n---\nb: 2\n", "expected a single document"),
    ("an undefined alias", b"cases: *nope\n", "found undefined alias"),
    ("an unknown tag", b"cases: !foo [1]\n", "could not determine a constructor"),
    ("a bad merge", b"a: &a [1]\nb: {<<: *a}\n", "expected a mapping for merging"),
    ("cases as a mapping", b"cases: {a: 1}\n", "expected a list of cases"),
    ("a case that is a number", ENTRY + b"cases: [1]\n", "a case must be a mapping"),
    ("turns as text", ENTRY + b"cases: [{turns: x}]\n", "expected a non-empty list of turns"),
    ("a turn that is a number", ENTRY + b"cases: [{turns: [1]}]\n", "a turn must be a mapping"),
    ("graders as a mapping", b"cases: [{graders: {kind: equality}}]\n", "expected a list"),
    ("an entry that is null", b"graders: [null]\ncases: [{}]\n", "a grader entry must be"),
    ("kind as a list", b"graders: [{kind: [equality]}]\ncases: [{}]\n", "expected a kind name"),
    ("kind as a number", b"graders: [{kind: 5}]\ncases: [{}]\n", "expected a kind name"),
    ("a name that is a list", b"name: [1]\n" + ENTRY + b"cases: [{}]\n", "expected a string"),
    ("a case name that is a number", ENTRY + b"cases: [{name: 1}]\n", "non-empty string"),
    ("a case name that is a date", ENTRY + b"cases: [{name: 2024-01-01}]\n", "non-empty string"),
    ("a weight of NaN", b"graders: [{kind: equality, weight: .nan}]\ncases: [{}]\n", "finite"),
    ("an infinite weight", b"graders: [{kind: equality, weight: .inf}]\ncases: [{}]\n", "finite"),
    (
        "a huge integer weight",
        b"graders: [{kind: equality, weight: " + b"9" * 400 + b"}]\ncases: [{}]\n",
        "too large for a float",
    ),
    (
        "a tolerance of 1e400",
        b"graders: [{kind: numeric, absolute_tolerance: 1e400}]\ncases: [{}]\n",
        "got '1e400', too large for a float (it would be infinity)",
    ),
    (
        "a threshold of NaN",
        b"graders: [{kind: equality, threshold: .nan}]\ncases: [{}]\n",
        "must be between 0 and 1",
    ),
    (
        "a tool call turn of NaN",
        ENTRY + b"cases: [{tool_calls: [{name: x, turn: .nan}]}]\n",
        "expected a whole number",
    ),
    (
        "content that is a mapping",
        ENTRY + b"cases: [{messages: [{role: user, content: {a: 1}}]}]\n",
        "expected a string or a list of content parts",
    ),
    ("metadata that is a list", ENTRY + b"cases: [{metadata: [1]}]\n", "expected a mapping"),
    ("context that is a number", ENTRY + b"cases: [{context: 5}]\n", "expected a list of texts"),
    (
        "composite children as text",
        b"graders: [{kind: all, graders: equality}]\ncases: [{}]\n",
        "expected a list of grader entries",
    ),
    ("a bad surrogate escape", ENTRY + b'cases: [{name: "\\udc80"}]\n', "invalid Unicode"),
    (
        "a mapping nested 300 deep",
        b"cases: " + b"{a: " * 300 + b"1" + b"}" * 300 + b"\n",
        "nested more than 100 levels deep",
    ),
]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [pytest.param(text, fragment, id=name) for name, text, fragment in MALFORMED],
)
def test_a_malformed_suite_is_one_clean_error(tmp_path: Path, text: bytes, fragment: str) -> None:
    path = tmp_path / "suite.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as caught:
        gradekit.load_suite(path)
    error = caught.value
    message = str(error)
    message.encode("utf-8")  # printable on any UTF-8 terminal
    assert fragment in message
    assert len(message) < 2_000  # a 5 MB line is not repeated whole
    for problem in error.problems:
        assert problem.where is not None and problem.where.startswith(f"{path}:")
