"""Options through cattrs: strict types, every problem at once, each with its path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

import attrs
import pytest

from gradekit import ConfigError, GradeResult, Registry
from gradekit.core.errors import OptionError


def _non_negative(instance, attribute, value):
    if value < 0:
        raise OptionError(attribute.name, f"must be >= 0, got {value!r}")


@attrs.frozen(kw_only=True)
class Demo:
    """A test kind with one option of every shape."""

    kind: ClassVar[str] = "demo"
    name: str = "demo"
    tolerance: float = attrs.field(default=0.0, validator=_non_negative)
    strict: bool = False
    mode: Literal["whole", "first"] = "whole"
    values: tuple[str, ...] = ()
    labels: Mapping[str, int] = attrs.field(factory=dict)
    count: int = 1

    def grade(self, sample):
        return GradeResult(self.kind, self.name, True, 1.0)


@pytest.fixture
def registry():
    registry = Registry(entry_points=False)
    registry.register("demo", Demo)
    return registry


def problems(registry, config):
    with pytest.raises(ConfigError) as caught:
        registry.create("demo", config=config)
    return [str(problem) for problem in caught.value.problems]


def test_config_is_structured_into_the_class(registry):
    grader = registry.create(
        "demo", "mine", {"tolerance": 1, "values": ["a"], "labels": {"x": 2}, "mode": "first"}
    )
    assert grader == Demo(name="mine", tolerance=1.0, values=("a",), labels={"x": 2}, mode="first")


def test_yaml_style_exponent_text_is_a_number(registry):
    assert registry.create("demo", config={"tolerance": "1e-6"}).tolerance == 1e-6


def test_every_problem_is_reported_at_once_with_its_path(registry):
    assert problems(
        registry,
        {"tolerance": "abc", "strict": "no", "mode": "middle", "values": "abc", "count": 1.5},
    ) == [
        "$.tolerance: expected a number, got 'abc'",
        "$.strict: expected true or false, got 'no'",
        "$.mode: expected one of 'whole', 'first', got 'middle'",
        "$.values: expected a list, got 'abc'",
        "$.count: expected a whole number, got 1.5 (float)",
    ]


def test_nested_paths(registry):
    assert problems(registry, {"values": ["a", 2], "labels": {"x": "y"}}) == [
        "$.values[1]: expected a string, got 2 (int)",
        "$.labels.x: expected a whole number, got 'y'",
    ]


def test_unknown_keys_are_named_with_a_suggestion(registry):
    assert problems(registry, {"tolerence": 1, "zzz": 2}) == [
        "$.tolerence: unknown option 'tolerence' for kind 'demo' (did you mean 'tolerance'?)",
        "$.zzz: unknown option 'zzz' for kind 'demo'",
    ]


def test_validators_name_their_key(registry):
    assert problems(registry, {"tolerance": -1}) == ["$.tolerance: must be >= 0, got -1.0"]


def test_a_bool_is_not_a_number(registry):
    assert problems(registry, {"tolerance": True}) == [
        "$.tolerance: expected a number, got True (bool)"
    ]


def test_config_must_be_a_mapping(registry):
    with pytest.raises(ConfigError, match="options for kind 'demo' must be a mapping"):
        registry.create("demo", config=["x"])  # type: ignore[arg-type]
