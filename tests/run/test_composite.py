"""The composite kinds: configuration errors, children's results, concurrency, timeouts."""

from __future__ import annotations

import time

import pytest
from runner_graders import Echo, Fixed, Sleep, entry

import gradekit
from gradekit import ConfigError, Registry, Sample
from gradekit.registry.entries import build_entry
from gradekit.run.composite import AllOf, AnyOf, AtLeast, Not, Weighted

SAMPLE = Sample(output="0", expected="0")


@pytest.fixture
def registry():
    registry = Registry(entry_points=False)
    registry.register("fixed", Fixed)
    registry.register("echo", Echo)
    registry.register("sleep", Sleep)
    for cls in (AllOf, AnyOf, AtLeast, Weighted, Not):
        registry.register(cls.kind, cls)
    return registry


def problems(raw, registry):
    with pytest.raises(ConfigError) as caught:
        build_entry(raw, registry=registry)
    return [str(problem) for problem in caught.value.problems]


def test_configuration_errors_name_their_paths(registry):
    empty = "a composite needs at least one grader; list its children under 'graders:'"
    assert problems({"kind": "all"}, registry) == [f"$.graders: {empty}"]
    assert problems({"kind": "any", "graders": []}, registry) == [f"$.graders: {empty}"]
    assert problems(
        {"kind": "all", "graders": [{"kind": "fixed", "enabled": False}]}, registry
    ) == [f"$.graders: {empty}"]
    assert problems(
        {"kind": "all", "grader": [], "graders": [{"kind": "fixed"}, {"kind": "fixed", "scor": 1}]},
        registry,
    ) == [
        "$.grader: unknown option 'grader' for kind 'all' (did you mean 'graders'?)",
        "$.graders[1].scor: unknown option 'scor' for kind 'fixed' (did you mean 'score'?)",
    ]
    assert problems(
        {"kind": "any", "graders": [{"kind": "all", "graders": [{"kind": "fixd"}]}]}, registry
    ) == ["$.graders[0].graders[0].kind: unknown grader kind 'fixd'; did you mean 'fixed'?"]
    assert problems(
        {"kind": "not", "graders": [{"kind": "fixed"}, {"kind": "echo"}]}, registry
    ) == [
        "$.graders: 'not' takes exactly one grader, got 2; wrap several in an 'all' or 'any' first"
    ]
    assert problems({"kind": "at_least", "graders": [{"kind": "fixed"}]}, registry) == [
        "$.count: this option is required; add count: 2"
    ]
    assert problems({"kind": "at_least", "count": 3, "graders": [{"kind": "fixed"}]}, registry) == [
        "$.count: must be between 1 and the number of non-advisory graders (1), got 3"
    ]
    assert problems({"kind": "weighted", "graders": [{"kind": "fixed"}]}, registry) == [
        "$.threshold: 'weighted' needs a threshold; add threshold: 0.8"
    ]


def test_the_common_threshold_goes_to_weighted_and_stays_on_the_entry_elsewhere(registry):
    weighted = build_entry(
        {"kind": "weighted", "threshold": 0.7, "graders": [{"kind": "fixed"}]}, registry=registry
    )
    assert weighted.threshold is None and weighted.grader.threshold == 0.7
    all_of = build_entry(
        {"kind": "all", "threshold": 0.7, "graders": [{"kind": "fixed"}]}, registry=registry
    )
    assert all_of.threshold == 0.7


def test_children_results_are_listed_in_details_and_keep_their_entry_keys(registry):
    raw = {
        "kind": "weighted",
        "threshold": 0.5,
        "graders": [
            {"kind": "fixed", "name": "a", "score": 0.9, "weight": 3},
            {"kind": "fixed", "name": "b", "outcome": "fail", "score": 0.2, "threshold": 0.1},
            {"kind": "fixed", "name": "c", "outcome": "fail", "advisory": True},
            {"kind": "any", "graders": [{"kind": "fixed", "outcome": "error"}, {"kind": "fixed"}]},
        ],
    }
    (result,) = gradekit.grade(SAMPLE, [build_entry(raw, registry=registry)])
    assert result.passed and result.error is None
    assert result.score == pytest.approx((3 * 0.9 + 0.2 + 1.0) / 5)
    children = result.details["results"]
    assert [(c["name"], c["passed"], c["advisory"], c["weight"]) for c in children] == [
        ("a", True, False, 3.0),
        ("b", True, False, 1.0),  # its own threshold turned the fail into a pass
        ("c", False, True, 1.0),
        ("any", True, False, 1.0),  # a passing child makes the errored one moot
    ]
    assert children[3]["details"]["results"][0]["error"] == "ValueError: broken"


def test_an_error_that_decides_the_verdict_makes_the_composite_an_error(registry):
    raw = {"kind": "all", "graders": [{"kind": "fixed"}, {"kind": "fixed", "outcome": "error"}]}
    (result,) = gradekit.grade(SAMPLE, [build_entry(raw, registry=registry)])
    assert result.error == (
        "ChildError: the verdict of 'all' depends on errored graders: 'fixed' (ValueError: broken)"
    )
    raw["graders"].append({"kind": "fixed", "name": "f", "outcome": "fail"})
    (result,) = gradekit.grade(SAMPLE, [build_entry(raw, registry=registry)])
    assert result.outcome == "fail"  # a failing child decides `all` whatever the error was
    raw = {"kind": "not", "graders": [{"kind": "fixed", "outcome": "error"}]}
    (result,) = gradekit.grade(SAMPLE, [build_entry(raw, registry=registry)])
    assert result.outcome == "error"


def test_children_run_concurrently_and_their_timeouts_fire(registry):
    raw = {
        "kind": "any",
        "graders": [
            {"kind": "sleep", "name": "s1", "seconds": 0.6},
            {"kind": "sleep", "name": "s2", "seconds": 0.6},
            {"kind": "sleep", "name": "hung", "timeout": 0.3},
        ],
    }
    started = time.monotonic()
    (result,) = gradekit.grade(SAMPLE, [build_entry(raw, registry=registry)])
    assert time.monotonic() - started < 1.1
    assert result.passed
    assert result.details["results"][2]["error"] == "TimeoutError: grader 'hung' exceeded 0.3s"


def test_composites_built_in_python_and_called_directly():
    composite = AtLeast(count=2, graders=[Fixed(name="a"), Echo(), entry(Fixed(outcome="fail"))])
    assert composite.grade(SAMPLE).passed
    assert Not(graders=[Echo()]).grade(Sample(output="1", expected="0")).passed
    assert repr(composite) == "AtLeast(name='at_least', graders=[a, echo, fixed])"


def test_composites_come_from_the_default_registry():
    entry_ = build_entry(
        {"kind": "all", "graders": [{"kind": "equality"}, {"kind": "contains", "values": ["0"]}]}
    )
    (result,) = gradekit.grade(SAMPLE, [entry_])
    assert result.passed and result.message == "all: 2 of 2 graders passed"
