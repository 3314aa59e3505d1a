"""The core types: immutability, validation of scores, the tri-state outcome."""

from __future__ import annotations

import collections
import math
import pickle

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradekit import GradeResult, Sample, ToolCall
from gradekit.core.types import FrozenDict, as_text, error_text, freeze, thaw


def test_sample_is_immutable_all_the_way_down():
    sample = Sample(
        case="c",
        expected={"rows": [1, 2]},
        tool_calls=[{"name": "search", "arguments": {"q": ["a"]}}],
        metadata={"language": "python", "tags": ["x"]},
    )
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        sample.output = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError, match="read-only"):
        sample.metadata["language"] = "go"
    with pytest.raises(TypeError, match="read-only"):
        sample.expected["rows"] = []
    assert sample.expected["rows"] == (1, 2)
    assert sample.metadata["tags"] == ("x",)
    assert sample.tool_calls == (ToolCall("search", {"q": ("a",)}),)
    with pytest.raises(TypeError, match="read-only"):
        sample.tool_calls[0].arguments["q"] = "b"


def test_sample_and_results_survive_pickling():
    sample = Sample(case="c", output="o", metadata={"k": [1]}, tool_calls=[ToolCall("t")])
    assert pickle.loads(pickle.dumps(sample)) == sample
    result = GradeResult("numeric", "n", True, 0.5, "ok", {"a": 1})
    assert pickle.loads(pickle.dumps(result)) == result


def test_thaw_gives_plain_json_values():
    frozen = Sample(metadata={"a": [{"b": 1}]}).metadata
    assert isinstance(frozen, FrozenDict)
    assert thaw(frozen) == {"a": [{"b": 1}]}
    assert type(thaw(frozen)["a"]) is list


@pytest.mark.parametrize("score", [math.nan, -0.1, 1.5, math.inf])
def test_grade_result_refuses_scores_outside_unit_interval(score):
    with pytest.raises(ValueError, match="score must be a finite number in \\[0, 1\\]"):
        GradeResult("k", "n", True, score)


@pytest.mark.parametrize("score", ["0.5", None, True])
def test_grade_result_refuses_non_numeric_scores(score):
    with pytest.raises(TypeError, match="score must be a number in \\[0, 1\\]"):
        GradeResult("k", "n", True, score)


def test_error_results_are_neither_pass_nor_fail():
    result = GradeResult.of_error("numeric", "n", ValueError("'n/a' is not a number"))
    assert result.outcome == "error"
    assert (result.passed, result.score) == (False, 0.0)
    assert result.error == "ValueError: 'n/a' is not a number"
    assert result.message == "ValueError: 'n/a' is not a number"
    with pytest.raises(ValueError, match="errored result"):
        GradeResult("k", "n", True, 1.0, error="X: y")


def test_outcomes():
    assert GradeResult("k", "n", True, 1.0).outcome == "pass"
    assert GradeResult("k", "n", False, 0.3).outcome == "fail"


def test_text_of_yaml_scalars():
    assert as_text(42) == "42"
    assert as_text(True) == "true"
    assert as_text(None) == ""
    assert as_text(0.14136) == "0.14136"
    assert error_text(KeyError("x")) == "KeyError: 'x'"
    assert error_text(RuntimeError()) == "RuntimeError"


_plain = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_values = st.recursive(
    _plain,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(collections.OrderedDict)
        | st.frozensets(_plain, max_size=3)
    ),
    max_leaves=12,
)


def _mutable_inside(value: object) -> bool:
    if type(value) in (dict, list, set, collections.OrderedDict):
        return True
    if isinstance(value, dict):
        return any(_mutable_inside(item) for item in value.values())
    if isinstance(value, (tuple, frozenset)):
        return any(_mutable_inside(item) for item in value)
    return False


def _data(value: object) -> object:
    """The data of a value: mappings as dicts, sequences as lists, sets as frozensets."""
    if isinstance(value, dict):
        return {key: _data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_data(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    return value


@given(_values)
def test_freeze_leaves_nothing_mutable_and_thaw_gives_the_value_back(value: object) -> None:
    frozen = freeze(value)
    assert not _mutable_inside(frozen)
    assert freeze(frozen) == frozen
    assert _data(frozen) == _data(value)
    if isinstance(value, dict) and value:
        with pytest.raises(TypeError, match="read-only"):
            frozen[next(iter(value))] = 1  # type: ignore[index]
