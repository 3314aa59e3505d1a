"""A dataset line that is not strict, bounded JSON is an errored case naming `file:line`; the
lines around it are graded. JSON has no NaN and no key written twice, so neither is read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gradekit.suite.load import load_suite
from gradekit.suite.located_yaml import MAX_DEPTH

GOOD = json.dumps({"name": "good", "output": "1"})


def errors(write, tmp_path: Path, line: str) -> list[tuple[str, str | None]]:
    (tmp_path / "d.jsonl").write_text(f"{GOOD}\n{line}\n{GOOD.replace('good', 'after')}\n")
    suite = load_suite(write("graders: [{kind: equality}]\ndataset: d.jsonl\n"))
    return [(case.name, case.error) for case in suite.cases()]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "[" * 100_000 + "]" * 100_000,
            f"values are nested more than {MAX_DEPTH} levels deep; flatten this value",
        ),
        (
            '{"output": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}",
            f"values are nested more than {MAX_DEPTH} levels deep; flatten this value",
        ),
        ('{"output": NaN}', "NaN is not JSON; write a number, null or a string"),
        ('{"output": Infinity}', "Infinity is not JSON; write a number, null or a string"),
        ('{"output": -Infinity}', "-Infinity is not JSON; write a number, null or a string"),
        (
            '{"output": "a", "output": "b"}',
            "the key 'output' is written twice in one object; keep one",
        ),
        (
            '{"output": {"x": 1, "x": 2}}',
            "the key 'x' is written twice in one object; keep one",
        ),
    ],
)
def test_a_bad_line_is_an_errored_case(write, tmp_path, line, message):
    assert errors(write, tmp_path, line) == [
        ("good", None),
        ("d.jsonl:2", f"d.jsonl:2: {message}"),
        ("after", None),
    ]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 reads integers of any length")
def test_a_5000_digit_integer(write, tmp_path):
    assert errors(write, tmp_path, '{"expected": ' + "7" * 5000 + "}")[1] == (
        "d.jsonl:2",
        "d.jsonl:2: an integer of more than 4300 digits; write it as a string",
    )


def test_nesting_within_the_limit_is_read(write, tmp_path):
    nested = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert errors(write, tmp_path, '{"output": ' + nested + "}")[1] == ("d.jsonl:2", None)


def test_a_byte_order_mark_on_the_first_line(write, tmp_path):
    (tmp_path / "d.jsonl").write_bytes(b"\xef\xbb\xbf" + GOOD.encode() + b"\n")
    suite = load_suite(write("graders: [{kind: equality}]\ndataset: d.jsonl\n"))
    assert [(case.name, case.error) for case in suite.cases()] == [("good", None)]
