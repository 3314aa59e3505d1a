"""The quick build of the usual dataset line gives the Case the full checks give, and any line
it cannot vouch for still gets the full path's Case or error message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradekit.suite.dataset
from gradekit.suite.load import load_suite

SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "4", "a b", "x:y", '"q"']),
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=4,
)
ODD = st.sampled_from(
    [True, False, 0, 1.5, "", "x", None, [], {}, [1], {"a": {"b": 1}}, {"a": [1]}]
)
"""One value of each shape that decides a path: booleans beside whole numbers, empty and nested."""
CALL_KEY = st.sampled_from(["name", "arguments", "result", "error", "turn", "nmae"])
PLAIN_CALL = st.fixed_dictionaries(
    {"name": st.sampled_from(["search", "f"])},
    optional={
        "arguments": st.dictionaries(st.sampled_from(["q", "n"]), SCALAR, max_size=2),
        "result": SCALAR,
        "turn": st.integers(0, 2),
        "error": st.just("boom"),
    },
)
CALL = st.one_of(
    PLAIN_CALL,
    st.builds(lambda call, key, value: {**call, key: value}, PLAIN_CALL, CALL_KEY, ODD | VALUE),
    VALUE,
)
LINE_KEY = st.sampled_from(
    [
        "name",
        "input",
        "output",
        "expected",
        "tool_calls",
        "metadata",
        "attempt",
        "tags",
        "graders",
        "context",
        "turns",
        "policy",
        "ground_truth",
        "ouptut",
        "note",
    ]
)
USUAL = st.fixed_dictionaries(
    {"output": SCALAR},
    optional={
        "name": st.sampled_from(["c1", "c2", "c3", ""]),
        "input": SCALAR,
        "expected": SCALAR,
        "tool_calls": st.lists(CALL, min_size=1, max_size=2),
        "metadata": st.dictionaries(st.sampled_from(["k", "v"]), SCALAR, max_size=2) | ODD,
        "attempt": st.just(0),
    },
)
CALLED = st.builds(
    lambda line, call, key, value: {**line, "tool_calls": [{**call, key: value}]},
    USUAL,
    PLAIN_CALL,
    CALL_KEY,
    ODD,
)
"""A usual line but for one odd value in its tool call."""
LINE = st.one_of(
    USUAL,
    CALLED,
    st.builds(lambda line, key, value: {**line, key: value}, USUAL, LINE_KEY, ODD | VALUE),
    st.dictionaries(LINE_KEY, VALUE, max_size=5),
    VALUE,
)


@pytest.fixture
def suite(write, registry, tmp_path):
    (tmp_path / "data.jsonl").write_text("{}\n", encoding="utf-8")
    path = write(
        """
        graders: [{kind: exact}]
        tags: [smoke]
        dataset: data.jsonl
        """
    )
    return load_suite(path, registry=registry)


def cases(suite: Any, quick: bool) -> list[Any]:
    with pytest.MonkeyPatch.context() as patch:
        if not quick:
            patch.setattr(gradekit.suite.dataset, "quick_case", lambda *args: None)
        return list(suite.cases())


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(LINE, min_size=1, max_size=3))
def test_quick_and_full_paths_give_the_same_cases(suite, tmp_path: Path, lines: list[Any]):
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (tmp_path / "data.jsonl").write_text(text, encoding="utf-8")
    quick, full = cases(suite, quick=True), cases(suite, quick=False)
    assert quick == full
    assert repr(quick) == repr(full)  # 1, 1.0 and True are equal but not the same value


def test_the_usual_line_takes_the_quick_path(suite, tmp_path: Path):
    line = {
        "name": "c1",
        "input": "2+2",
        "output": "4",
        "expected": 4,
        "tool_calls": [{"name": "search", "arguments": {"q": "2+2"}}],
        "metadata": {"source": "web"},
    }
    (tmp_path / "data.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    built: list[Any] = []
    real = gradekit.suite.dataset.quick_case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            gradekit.suite.dataset, "quick_case", lambda *a: built.append(real(*a)) or built[-1]
        )
        (case,) = suite.cases()
    assert built == [case]
    assert case.tags == ("smoke",)
    sample = case.turns[0].sample
    assert (sample.output, sample.expected, sample.metadata) == ("4", 4, {"source": "web"})
    assert sample.tool_calls[0].arguments == {"q": "2+2"}


@pytest.mark.parametrize(
    "line",
    [
        {"output": "4", "tool_calls": [{"name": "f", "arguments": {"a": {"b": 1}}}]},
        {"output": "4", "tool_calls": [{"name": "f", "arguments": {"a": [1]}}]},
        {"output": "4", "tool_calls": [{"name": "f", "turn": True}]},
        {"output": "4", "tool_calls": [{"name": "f", "error": 1}]},
        {"output": "4", "tool_calls": [{"name": 1}]},
        {"output": "4", "tool_calls": [{"nmae": "f"}]},
        {"output": "4", "tool_calls": {"name": "f"}},
        {"output": "4", "metadata": {"a": {"b": 1}}},
        {"output": "4", "metadata": [1]},
        {"output": ["4"], "expected": {"a": 1}},
        {"output": "4", "expected": True, "name": ""},
        {"output": "4", "ouptut": "5"},
        {"output": "4", "ground_truth": "4"},
    ],
)
def test_a_line_of_another_shape_gets_what_the_full_checks_give(suite, tmp_path: Path, line):
    (tmp_path / "data.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    quick, full = cases(suite, quick=True), cases(suite, quick=False)
    assert repr(quick) == repr(full)
