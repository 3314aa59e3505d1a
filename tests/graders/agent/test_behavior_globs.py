"""Tool-name patterns, compiled once per grader, match exactly as `fnmatch.fnmatchcase` does."""

from __future__ import annotations

import fnmatch

from hypothesis import example, given
from hypothesis import strategies as st

import gradekit
from gradekit import Sample

# Names and patterns over a small alphabet with the glob characters, so they often collide.
NAME = st.text(alphabet="ab_*?[]!", min_size=0, max_size=6)


@given(pattern=NAME.filter(bool), names=st.lists(NAME.filter(bool), max_size=6))
@example(pattern="[ab]_", names=["a_", "b_", "c_", "[ab]_"])
@example(pattern="[!a]*", names=["a", "b", "!"])
@example(pattern="a*", names=["a", "ab", "ba", "a*"])
@example(pattern="[a", names=["[a", "a"])
def test_required_and_forbidden_tools_match_as_fnmatchcase(pattern: str, names: list[str]) -> None:
    expected = sum(name == pattern or fnmatch.fnmatchcase(name, pattern) for name in names)
    sample = Sample(tool_calls=[{"name": name} for name in names])
    required = gradekit.create("behavior", config={"required_tools": [pattern]}).grade(sample)
    forbidden = gradekit.create("behavior", config={"forbidden_tools": [pattern]}).grade(sample)
    counted = gradekit.create("behavior", config={"min_calls": {pattern: 99}}).grade(sample)
    assert required.passed is (expected > 0)
    assert forbidden.passed is (expected == 0)
    times = "1 time" if expected == 1 else f"{expected} times"
    assert counted.details["checks"][0]["message"] == f"called {times} (at least 99)"
