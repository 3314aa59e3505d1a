"""The shared rules each live once: close-match hints, fractions, strict JSON, nested errors."""

from __future__ import annotations

import math

import pytest

from gradekit import ConfigError, Problem
from gradekit.core.errors import did_you_mean, hint_suffix
from gradekit.core.values import find_json_problem, fraction_problem, json_problem


def test_hints_name_the_closest_word_or_nothing() -> None:
    assert did_you_mean("treshold", ["threshold", "timeout"]) == "did you mean 'threshold'?"
    assert hint_suffix("treshold", ["threshold"]) == " (did you mean 'threshold'?)"
    assert did_you_mean("zzz", ["threshold"]) is None
    assert hint_suffix("zzz", ["threshold"]) == ""


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0])
def test_fractions_from_0_to_1_are_fine(value: float) -> None:
    assert fraction_problem(value) is None


@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, math.inf])
def test_other_numbers_are_not_fractions(value: float) -> None:
    assert fraction_problem(value) == f"must be between 0 and 1, got {value!r}"


def test_the_strict_json_check_finds_the_first_problem_with_its_path() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    assert find_json_problem({"a": [1, "x", None, True, 2.5]}) is None
    assert json_problem({"a": [1, math.nan]}) == ("ValueError", "$.a[1] is nan")
    assert json_problem({"a": {1: 2}}) == ("TypeError", "$.a has a non-string key 1")
    assert json_problem({"a": {1, 2}}) == ("TypeError", "$.a is a set")
    assert json_problem({"c": cyclic}) == ("ValueError", "$.c[0] contains itself")


def test_a_nested_config_error_is_placed_under_its_parent() -> None:
    nested = ConfigError("bad", [Problem(("threshold",), "must be between 0 and 1", where="x")])
    (moved,) = nested.problems_under("graders", 2)
    assert moved.path == ("graders", 2, "threshold")
    assert moved.message == "must be between 0 and 1" and moved.where == "x"
    (alone,) = ConfigError("cannot load it").problems_under("graders", 0)
    assert alone == Problem(("graders", 0), "cannot load it")
