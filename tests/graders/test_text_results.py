"""Results of the text kinds are ordinary GradeResults, and using a kind imports only it."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import pytest

import gradekit
from gradekit import Sample


def test_creating_equality_imports_neither_the_other_kinds_nor_jsonschema() -> None:
    code = (
        "import sys, gradekit\n"
        "gradekit.create('equality')\n"
        "prefixes = ('gradekit.graders.', 'jsonschema')\n"
        "print(sorted(m for m in sys.modules if m.startswith(prefixes)))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert completed.stdout.strip() == "['gradekit.graders.equality', 'gradekit.graders.results']"


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("equality", {"case_insensitive": True, "strip_punctuation": True}),
        ("numeric", {"relative_tolerance": 0.1, "extract": "last"}),
        ("contains", {"values": ["a", "B"], "case_insensitive": True}),
        ("not_contains", {"values": ["x"]}),
        ("regex", {"pattern": r"(\d+)", "full_match": True}),
        ("json", {"schema": {"type": "array"}, "equals_expected": True}),
    ],
)
def test_graders_survive_pickling_for_process_isolation(kind: str, options: dict[str, Any]) -> None:
    grader = gradekit.create(kind, config=options)
    copy = pickle.loads(pickle.dumps(grader))
    sample = Sample(output="[1, 2]", expected="[1, 2.0]")
    assert copy == grader
    assert copy.grade(sample) == grader.grade(sample)


@pytest.mark.parametrize(
    ("kind", "config"),
    [
        ("equality", {}),
        ("numeric", {}),
        ("contains", {"values": ["1"]}),
        ("regex", {"pattern": "^1"}),
        ("json", {}),
    ],
)
def test_an_integer_past_str_s_digit_limit_is_graded_not_raised(
    kind: str, config: dict[str, Any]
) -> None:
    # str() refuses integers of more than 4300 digits (Python 3.11): the kinds compare such
    # a value as its digits, as they compare any other integer, instead of raising.
    big = 10**5000
    digits = "1" + "0" * 5000
    grader = gradekit.create(kind, config=config)
    for sample in (Sample(output=big, expected=big), Sample(output=digits, expected=big)):
        result = grader.grade(sample)
        assert result.error is None or kind == "json", result.message
    if kind in ("equality", "numeric"):
        assert grader.grade(Sample(output=digits, expected=big)).passed
        assert not grader.grade(Sample(output=digits + "1", expected=big)).passed
