"""gradekit's own kinds keep the contract third-party packs are held to: each runs through
GraderContract, with example configs that cover its main options."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from hypothesis import settings

from gradekit.core.context import current_run
from gradekit.process import workers
from gradekit.testing import GraderContract, samples


@pytest.fixture(autouse=True, scope="module")
def _workers_stopped() -> Iterator[None]:
    """The math kind's grades, outside any run, leave its workers warm: stopped at the end."""
    yield
    workers.stop_workers(current_run())


# Commands run by the process kinds: they read stdin, print, and exit 0.
ECHO_LENGTH = [sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"]


class TestEquality(GraderContract):
    kind = "equality"
    configs = (
        {},
        {"case_insensitive": True},
        {"strip_whitespace": True, "strip_punctuation": True},
        {"case_insensitive": True, "strip_whitespace": True, "strip_punctuation": True},
    )


class TestNumeric(GraderContract):
    kind = "numeric"
    configs = (
        {},
        {"absolute_tolerance": 0.01, "accept_percent": True},
        {"accept_thousands_separators": True, "extract": "last"},
        {"relative_tolerance": 1e-6, "extract": "only"},
    )


class TestContains(GraderContract):
    kind = "contains"
    configs = (
        {"values": ["the", "Paris"]},
        {"values": ["42", "é"], "mode": "any", "case_insensitive": True},
    )


class TestNotContains(GraderContract):
    kind = "not_contains"
    configs = ({"values": ["I cannot", "the"], "case_insensitive": True},)


class TestRegex(GraderContract):
    kind = "regex"
    configs = (
        {"pattern": r"\d+"},
        {"pattern": "^(yes|no)$", "case_insensitive": True, "full_match": True},
    )


class TestBudget(GraderContract):
    kind = "budget"
    configs = (
        {"max_total_tokens": 4000, "max_duration": 30},
        {"max_tool_calls": 5, "max_error_spans": 0},
        {"max_tool_calls": 0},
    )


class TestJson(GraderContract):
    kind = "json"
    configs = ({}, {"equals_expected": True}, {"schema": {"type": "object"}})


class TestCode(GraderContract):
    kind = "code"
    configs = (
        {"grader": "my_benchmarks:numeric_equal"},
        {"grader": "my_benchmarks:returns_grader_result", "threshold": 0.5},
    )


CHILDREN = [{"kind": "equality"}, {"kind": "contains", "values": ["the"]}]


class TestAll(GraderContract):
    kind = "all"
    configs = ({"graders": CHILDREN}, {"graders": [*CHILDREN, {"kind": "regex", "pattern": "a"}]})


class TestAny(GraderContract):
    kind = "any"
    configs = ({"graders": CHILDREN},)


class TestAtLeast(GraderContract):
    kind = "at_least"
    configs = ({"count": 1, "graders": CHILDREN},)


class TestWeighted(GraderContract):
    kind = "weighted"
    configs = ({"threshold": 0.5, "graders": [{**CHILDREN[0], "weight": 2}, CHILDREN[1]]},)


class TestNot(GraderContract):
    kind = "not"
    configs = ({"graders": [{"kind": "numeric"}]},)


class TestBehavior(GraderContract):
    kind = "behavior"
    configs = (
        {"required_tools": ["read_file"]},
        {
            "forbidden_tools": ["mcp__github__*"],
            "max_tool_calls": 3,
            "order": ["read_file", "edit_file"],
        },
        {"expected_calls": [{"name": "search", "arguments": {"q": "Paris"}}], "scope": "case"},
    )
    sample_strategy = samples(require_tool_calls=True)


class TestFile(GraderContract):
    kind = "file"
    configs = (
        {"required_files": ["*.py"]},
        {"forbidden_files": ["*.log"], "max_files": 3, "contains": {"**/*.py": "def main"}},
    )
    sample_strategy = samples(require_workspace=True)


# The process kinds run a command per grade: fewer examples. Their details carry the
# process's run time, so they are declared not deterministic.
class TestProgram(GraderContract):
    kind = "program"
    configs = ({"command": ECHO_LENGTH, "expected_output": "0"},)
    deterministic = False
    hypothesis_settings = settings(max_examples=5)


class TestBuild(GraderContract):
    kind = "build"
    configs = ({"language": "python"},)
    deterministic = False
    sample_strategy = samples(require_workspace=True)
    hypothesis_settings = settings(max_examples=5)


class TestLint(GraderContract):
    kind = "lint"
    configs = ({"linters": ["ruff"]},)
    deterministic = False
    sample_strategy = samples(require_workspace=True)
    hypothesis_settings = settings(max_examples=5)


# The math kind checks in a warm worker killed at its timeout: a sample near the limit may
# pass once and time out the next time, so it is not held to giving the same result twice.
class TestMath(GraderContract):
    kind = "math"
    configs = ({}, {"extract": "whole", "float_rounding": 3}, {"extract": "last_number"})
    deterministic = False
    hypothesis_settings = settings(max_examples=5)
