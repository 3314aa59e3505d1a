"""The two ways the runner grades a case agree: one case at a time on the event loop (any
grader) and in batches on one thread (inline graders), with reports kept, streamed to
`on_case`, or only counted (`keep_cases=False` without `on_case`)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from runner_graders import Fixed, PooledFixed, entry

from gradekit import Sample
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Policy, Suite, Turn

OUTCOMES = st.sampled_from(["pass", "fail", "error", "wrong"])
POLICIES = st.sampled_from(
    [Policy(), Policy("any"), Policy("weighted"), Policy("weighted", 0.8), Policy("weighted", 0.0)]
)


@st.composite
def specs(draw: Any) -> list[Any]:
    """Cases as plain data: [(case policy, [turn: [(outcome, score, entry keys)]])]."""
    cases = []
    for _ in range(draw(st.integers(1, 12))):
        turns = []
        for _ in range(draw(st.integers(1, 3))):
            graders = []
            for number in range(draw(st.integers(1, 3))):
                keys = {
                    "advisory": draw(st.booleans()),
                    "weight": draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])),
                    "threshold": draw(st.sampled_from([None, 0.5])),
                    "fail_on_error": draw(st.booleans()),
                }
                score = draw(st.sampled_from([None, 0.0, 0.25, 0.75, 1.0]))
                graders.append((f"g{number}", draw(OUTCOMES), score, keys))
            turns.append(graders)
        cases.append((draw(st.one_of(st.none(), POLICIES)), turns))
    return cases


def build(spec: list[Any], suite_policy: Policy, *, inline: bool) -> Suite:
    kind = Fixed if inline else PooledFixed
    cases = [
        Case(
            f"c{index}",
            tuple(
                Turn(
                    Sample(output="0"),
                    tuple(
                        entry(kind(name=name, outcome=outcome, score=score), **keys)
                        for name, outcome, score, keys in graders
                    ),
                )
                for graders in turns
            ),
            policy=policy,
        )
        for index, (policy, turns) in enumerate(spec)
    ]
    return Suite("paths", lambda: iter(cases), policy=suite_policy)


def without_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [without_durations(item) for item in value]
    return value


def reports(report: Any) -> list[Any]:
    return [without_durations(case.to_dict()) for case in report.cases]


@settings(max_examples=60, deadline=None)
@given(specs(), POLICIES)
def test_batches_and_one_case_at_a_time_give_the_same_reports(spec, policy):
    pooled = run_suite(build(spec, policy, inline=False), jobs=3)
    batched = run_suite(build(spec, policy, inline=True), jobs=3)
    assert reports(batched) == reports(pooled)
    assert batched.summary == pooled.summary


@settings(max_examples=60, deadline=None)
@given(specs(), POLICIES)
def test_counting_only_gives_the_summary_of_the_full_reports(spec, policy):
    suite = build(spec, policy, inline=True)
    full = run_suite(suite)
    streamed: list[Any] = []
    on_case = run_suite(suite, keep_cases=False, on_case=streamed.append)
    counted = run_suite(suite, keep_cases=False)
    assert counted.cases == () and on_case.cases == ()
    assert counted.summary == full.summary == on_case.summary
    assert sorted(map(str, map(without_durations, (c.to_dict() for c in streamed)))) == sorted(
        map(str, reports(full))
    )
