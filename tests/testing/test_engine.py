"""How the kit searches (settings, profiles, deadlines) and how it shows what it found."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any, Literal

import attrs

from gradekit import Sample, ToolCall
from gradekit.testing import Violation
from gradekit.testing._rules import wrong_values
from gradekit.testing._subject import show

SEARCHES = """
import time
from hypothesis import settings, strategies as st
from gradekit import ConfigError, GradeResult, Registry, Sample
from gradekit.testing import check_grader

drawn = []
strategy = st.integers().map(lambda i: drawn.append(i) or Sample(output=str(i)))


class Slow:
    kind = "acme.slow"

    def __init__(self, name, config):
        if config:
            raise ConfigError(f"unknown options {sorted(config)}")
        self.name = name

    def grade(self, sample):
        time.sleep(0.002)
        return GradeResult(self.kind, self.name, True, 1.0, "slow")


registry = Registry(entry_points=False)
registry.register("acme.slow", Slow)


def examples(**kwargs):
    drawn.clear()
    violations = check_grader("acme.slow", registry=registry, samples=strategy, **kwargs)
    assert violations == [], violations
    return len(drawn)


print(examples())
print(examples(settings=settings(max_examples=7, deadline=0.001)))
settings.register_profile("gradekit", max_examples=3)
print(examples())
print(examples(settings=settings(max_examples=4)))
"""


def test_modest_defaults_a_gradekit_profile_and_explicit_settings() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SEARCHES)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    # 50 examples by default (one search for every grading rule); explicit settings win,
    # with no deadline even when they set one; then a registered `gradekit` profile.
    assert done.stdout.split() == ["50", "7", "3", "4"]


def test_violations_show_samples_by_their_fields_that_are_set() -> None:
    sample = Sample(output="x" * 500, expected=42, tool_calls=[ToolCall("search", {"q": "a"})])
    violation = Violation("acme.rouge", "well_formed", "grade raised ValueError", sample, {})
    assert str(violation) == (
        "acme.rouge: well_formed: grade raised ValueError\n"
        "  config: {}\n"
        f"  Falsifying example: Sample(output={'x' * 200!r}... (500 characters), expected=42, "
        "tool_calls=(ToolCall(name='search', arguments={'q': 'a'}),))"
    )
    assert show(Sample()) == "Sample()"
    assert show((Sample(output=""), Sample(turn=1))) == "(Sample(output=''), Sample(turn=1))"
    kind_level = Violation("shout", "namespaced", "no namespace", "shout")
    assert str(kind_level) == "shout: namespaced: no namespace\n  Falsifying example: 'shout'"


@attrs.frozen
class Options:
    name: str = "x"
    strict: bool = False
    limit: int | None = None
    ratio: float = 0.5
    label: str = ""
    mode: Literal["a", "b"] = "a"
    words: tuple[str, ...] = ()
    weights: dict[str, float] = attrs.field(factory=dict)
    anything: Any = None
    either: int | str = 0
    _private: int = 0


def test_wrong_values_come_from_the_options_types() -> None:
    assert dict(wrong_values(Options, {})) == {
        "strict": "no",
        "limit": "abc",
        "ratio": "abc",
        "label": [1, 2],
        "mode": [1, 2],
        "words": "abc",
        "weights": "abc",
    }


def test_wrong_values_without_an_options_class_come_from_the_example() -> None:
    example = {"threshold": 0.5, "strict": True, "values": ["a"], "pattern": "x", "x": None}
    assert dict(wrong_values(None, example)) == {
        "threshold": "abc",
        "strict": "no",
        "values": "abc",
        "pattern": [1, 2],
    }
