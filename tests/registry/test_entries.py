"""Grader entries: the common keys, split from the kind's options, at any level."""

from __future__ import annotations

from typing import ClassVar

import attrs
import pytest

from gradekit import ConfigError, GradeResult, Registry
from gradekit.registry.entries import build_entry


@attrs.frozen(kw_only=True)
class Scored:
    """A kind with one option of its own."""

    kind: ClassVar[str] = "scored"
    name: str = "scored"
    score: float = 1.0

    def grade(self, sample):
        return GradeResult(self.kind, self.name, self.score >= 0.5, self.score)


@attrs.frozen(kw_only=True)
class OwnsThreshold:
    """A kind that applies the common `threshold` itself."""

    kind: ClassVar[str] = "owns"
    name: str = "owns"
    threshold: float | None = None

    def grade(self, sample):
        return GradeResult(self.kind, self.name, True, 1.0)


@attrs.frozen(kw_only=True)
class KnowsAdvisory:
    """A kind that needs no threshold on an advisory entry (as the similarity kinds)."""

    kind: ClassVar[str] = "knows"
    name: str = "knows"
    threshold: float | None = None
    advisory: bool = False

    def grade(self, sample):
        return GradeResult(self.kind, self.name, True, 1.0)


@pytest.fixture
def registry():
    registry = Registry(entry_points=False)
    registry.register("scored", Scored)
    registry.register("owns", OwnsThreshold)
    return registry


def test_common_keys_are_split_from_options(registry):
    entry = build_entry(
        {
            "kind": "scored",
            "name": "s",
            "score": 0.3,
            "weight": 2,
            "advisory": True,
            "threshold": 0.2,
            "timeout": 5,
            "isolation": "process",
            "fail_on_error": True,
        },
        registry=registry,
        location="suite.yaml:3:5",
    )
    assert entry is not None
    assert entry.grader == Scored(name="s", score=0.3)
    assert (entry.kind, entry.name, entry.weight, entry.advisory) == ("scored", "s", 2.0, True)
    assert (entry.threshold, entry.timeout, entry.isolation) == (0.2, 5.0, "process")
    assert entry.fail_on_error
    assert entry.config == {"score": 0.3}
    assert entry.location == "suite.yaml:3:5"


def test_common_numbers_may_be_written_as_yaml_1_1_reads_them(registry):
    # PyYAML reads `1e3` (an exponent and no dot) as text, as kind options accept it.
    import yaml

    raw = yaml.safe_load("{kind: scored, weight: 1e3, threshold: 5e-1, timeout: 1e2}")
    assert raw["weight"] == "1e3"
    entry = build_entry(raw, registry=registry)
    assert entry is not None
    assert (entry.weight, entry.threshold, entry.timeout) == (1000.0, 0.5, 100.0)


def test_defaults(registry):
    entry = build_entry({"kind": "scored"}, registry=registry)
    assert entry is not None
    assert (entry.name, entry.weight, entry.advisory, entry.threshold) == (
        "scored",
        1.0,
        False,
        None,
    )
    assert (entry.timeout, entry.isolation, entry.fail_on_error) == (None, None, False)


def test_disabled_entries_are_dropped(registry):
    assert build_entry({"kind": "scored", "enabled": False}, registry=registry) is None


def test_a_kind_with_its_own_threshold_receives_the_common_one(registry):
    entry = build_entry({"kind": "owns", "threshold": 0.7}, registry=registry)
    assert entry is not None
    assert entry.grader == OwnsThreshold(threshold=0.7)
    assert entry.threshold is None


def test_a_kind_declaring_advisory_receives_the_entrys_flag(registry):
    registry.register("knows", KnowsAdvisory)
    entry = build_entry({"kind": "knows", "advisory": True}, registry=registry)
    assert entry is not None
    assert entry.grader == KnowsAdvisory(advisory=True)
    assert entry.advisory is True
    assert dict(entry.config) == {"advisory": True}
    plain = build_entry({"kind": "knows"}, registry=registry)
    assert plain is not None
    assert plain.grader == KnowsAdvisory()
    assert dict(plain.config) == {}
    # A kind that does not declare it never sees it.
    scored = build_entry({"kind": "scored", "advisory": True}, registry=registry)
    assert scored is not None
    assert scored.grader == Scored()


def test_common_key_and_option_problems_come_together(registry):
    with pytest.raises(ConfigError) as caught:
        build_entry(
            {
                "kind": "scored",
                "weight": -1,
                "threshold": 2,
                "timeout": 0,
                "isolation": "vm",
                "advisory": "yes",
                "scroe": 1,
            },
            registry=registry,
        )
    assert [str(p) for p in caught.value.problems] == [
        "$.weight: must be a finite number >= 0, got -1.0",
        "$.threshold: must be between 0 and 1, got 2.0",
        "$.timeout: expected a finite number of seconds > 0 and at most 86400, got 0",
        "$.isolation: expected 'thread' or 'process', got 'vm'",
        "$.advisory: expected true or false, got 'yes'",
        "$.scroe: unknown option 'scroe' for kind 'scored' (did you mean 'score'?)",
    ]


def test_missing_or_unknown_kind(registry):
    with pytest.raises(ConfigError) as caught:
        build_entry({"name": "x"}, registry=registry)
    assert [str(p) for p in caught.value.problems] == [
        "missing 'kind': every grader entry names its kind"
    ]
    with pytest.raises(ConfigError) as caught:
        build_entry({"kind": "scord"}, registry=registry)
    assert [str(p) for p in caught.value.problems] == [
        "$.kind: unknown grader kind 'scord'; did you mean 'scored'?"
    ]


def test_entry_must_be_a_mapping(registry):
    with pytest.raises(ConfigError, match="a grader entry must be a mapping with a 'kind'"):
        build_entry(["scored"], registry=registry)  # type: ignore[arg-type]
