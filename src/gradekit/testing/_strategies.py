"""Strategies for gradekit's values: answers, tool calls, grade results, grader entries.

Every strategy builds values the way a suite file or an agent trace would give them: YAML
values for answers, JSON values for tool arguments and details. Samples are in `_samples`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any, Final

from hypothesis import strategies as st

from gradekit._types import GradeResult, ToolCall
from gradekit.testing._text import numbers_as_text, texts

__all__ = [
    "answers",
    "grade_results",
    "grader_entries",
    "json_values",
    "kind_names",
    "small_json",
    "tool_calls",
]

_KIND: Final = r"\A[a-z][a-z0-9_]{0,8}(\.[a-z0-9_]{1,8}){0,2}\Z"


@functools.cache
def kind_names() -> st.SearchStrategy[str]:
    """Valid kind names, dotted or not (`numeric`, `acme.rouge_l`)."""
    return st.from_regex(_KIND)


def _json_scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
    )


@functools.cache
def json_values(*, max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Strict JSON values: null, booleans, integers, finite floats, text, lists and objects."""
    return st.recursive(
        _json_scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=max_leaves,
    )


def _shallow(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # One level of lists and mappings: inside samples, drawing is most of the contract's
    # time, and recursive strategies cost the most to draw and to shrink.
    return st.one_of(
        scalars,
        st.lists(scalars, max_size=3),
        st.dictionaries(st.text(max_size=6), scalars, max_size=3),
    )


@functools.cache
def small_json() -> st.SearchStrategy[Any]:
    """JSON values one level deep: scalars, and lists or objects of scalars."""
    return _shallow(_json_scalars())


@functools.cache
def _yaml_values() -> st.SearchStrategy[Any]:
    # What YAML can hand a grader as `output` or `expected`: NaN and infinities included.
    return _shallow(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(),
            texts(huge=False),
            numbers_as_text(),
        )
    )


@functools.cache
def answers() -> st.SearchStrategy[Any]:
    """What an agent answers, as a suite gives it: mostly text and numbers as text, sometimes
    any other YAML value (numbers, booleans, lists, mappings, null), NaN and the infinities
    among them (`.nan`, `.inf`)."""
    return _answers()


@st.composite
def _answers(draw: st.DrawFn) -> Any:
    # NaN and the infinities about one answer in 12, chosen apart: as one branch of a one_of
    # they came one answer in 70 (one_of flattens nested one_ofs into branches of equal
    # chance), and a search of 200 samples could miss them. The finite branch is the one
    # shrinking leads to.
    if draw(st.integers(0, 11)) == 11:
        return draw(st.sampled_from(_NOT_FINITE))
    return draw(st.one_of(texts(), numbers_as_text(), _yaml_values()))


_NOT_FINITE: Final = (math.nan, math.inf, -math.inf)


@functools.cache
def tool_calls() -> st.SearchStrategy[ToolCall]:
    """Tool calls as traces record them: a name, JSON arguments, a result or an error, and
    sometimes the agent-loop turn."""
    names = st.one_of(
        st.sampled_from(["read_file", "edit_file", "run_tests", "search", "mcp__github__get"]),
        st.text(max_size=10),
    )
    return st.builds(
        ToolCall,
        name=names,
        arguments=st.dictionaries(st.text(max_size=8), small_json(), max_size=3),
        result=st.one_of(st.none(), small_json()),
        error=st.one_of(st.none(), st.text(max_size=30)),
        turn=st.one_of(st.none(), st.integers(min_value=0, max_value=30)),
    )


# -- results and entries -----------------------------------------------------------------


@st.composite
def _result(draw: st.DrawFn, kind: str | None, name: str | None) -> GradeResult:
    kind = draw(kind_names()) if kind is None else kind
    name = (
        draw(st.one_of(st.just(kind), st.text(min_size=1, max_size=12))) if name is None else name
    )
    details = draw(st.one_of(st.none(), st.dictionaries(st.text(max_size=8), json_values())))
    duration = draw(st.floats(min_value=0.0, max_value=1e6))
    message = draw(st.text(max_size=40))
    if draw(st.integers(0, 3)) == 0:
        error = draw(st.sampled_from(["ValueError", "TimeoutError", "ChildError"]))
        error += ": " + draw(st.text(min_size=1, max_size=20))
        return GradeResult(kind, name, False, 0.0, message or error, details, error, duration)
    passed = draw(st.booleans())
    score = draw(st.floats(min_value=0.0, max_value=1.0))
    return GradeResult(kind, name, passed, score, message, details, None, duration)


def grade_results(
    *, kind: str | None = None, name: str | None = None
) -> st.SearchStrategy[GradeResult]:
    """Valid GradeResults: passes, fails and errors (about one in four; `passed` False and
    `score` 0.0), with JSON details or none. `kind` and `name` are drawn unless given."""
    return _result(kind, name)


_DEFAULT_ENTRY_KINDS: Final = ("equality", "numeric", "json")


def grader_entries(
    kinds: st.SearchStrategy[str] | None = None,
    options: st.SearchStrategy[Mapping[str, Any]] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Grader entries as plain mappings, the way a suite's YAML gives them: `kind` plus any of
    the common keys (`name`, `weight`, `advisory`, `threshold`, `timeout`, `isolation`,
    `enabled`, `fail_on_error`) with valid values, plus the kind's own options.

    `kinds` draws the kind (default: built-in kinds that need no options); `options` draws
    the kind's options (default: none), merged into the entry.
    """
    common = st.fixed_dictionaries(
        {"kind": kinds if kinds is not None else st.sampled_from(_DEFAULT_ENTRY_KINDS)},
        optional={
            "name": st.text(min_size=1, max_size=16),
            "weight": st.floats(min_value=0.0, max_value=100.0),
            "advisory": st.booleans(),
            "threshold": st.floats(min_value=0.0, max_value=1.0),
            "timeout": st.floats(min_value=0.1, max_value=600.0),
            "isolation": st.sampled_from(["thread", "process"]),
            "enabled": st.booleans(),
            "fail_on_error": st.booleans(),
        },
    )
    own = options if options is not None else st.just({})
    return st.tuples(common, own).map(lambda parts: {**parts[1], **parts[0]})
