"""The two ways the runner grades a case agree: one case at a time on the event loop (any
grader) and in batches on one thread (inline graders), with reports kept, streamed to
`on_case`, or only counted (`keep_cases=False` without `on_case`); and the JSON report is the
same whether kept, streamed as cases end (`CaseStream`) or read back from a results log."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runner_graders import Fixed, PooledFixed, entry
from timings import without_durations

from gradekit import Outputs, Sample, ToolCall
from gradekit.report import json as json_text
from gradekit.report.json import write_json
from gradekit.run.resume import ResultsLog
from gradekit.run.runner import run_suite
from gradekit.run.stream import FAILING_KEPT, CaseStream
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
    on_case = run_suite(suite, on_case=streamed.append, outputs=Outputs(keep_cases=False))
    counted = run_suite(suite, outputs=Outputs(keep_cases=False))
    assert counted.cases == () and on_case.cases == ()
    assert counted.summary == full.summary == on_case.summary
    assert sorted(map(str, map(without_durations, (c.to_dict() for c in streamed)))) == sorted(
        map(str, reports(full))
    )


def build_mixed(spec: list[Any], suite_policy: Policy) -> Suite:
    """Every other case graded one at a time (pooled), the rest in batches: cases end out of
    suite order."""
    inline_cases = build(spec, suite_policy, inline=True).cases()
    pooled_cases = build(spec, suite_policy, inline=False).cases()
    cases = [
        inline if index % 2 else pooled
        for index, (inline, pooled) in enumerate(zip(inline_cases, pooled_cases, strict=True))
    ]
    return Suite("paths", lambda: iter(cases), policy=suite_policy)


def json_report(path: Path) -> Any:
    return without_durations(json.loads(path.read_text(encoding="utf-8")))


@settings(max_examples=40, deadline=None)
@given(specs(), POLICIES)
def test_the_streamed_json_report_and_the_logged_one_equal_the_kept_one(spec, policy):
    suite = build_mixed(spec, policy)
    with tempfile.TemporaryDirectory() as folder:
        kept, streamed, logged = (Path(folder) / name for name in ("kept", "streamed", "log"))
        full = run_suite(suite, jobs=3)
        write_json(full, kept)
        with CaseStream(streamed, spool=True) as stream:
            report = run_suite(suite, jobs=3, outputs=Outputs(keep_cases=False, stream=stream))
            assert stream.write_json(report) == []
            assert [without_durations(c.to_dict()) for c in stream.cases()] == reports(full)
            failing = [c.name for c in full.cases if c.outcome != "pass"][:FAILING_KEPT]
            assert [c.name for c in stream.failing()] == failing
        with ResultsLog(Path(folder) / "results.jsonl") as log:
            again = run_suite(suite, jobs=3, resume=log, outputs=Outputs(keep_cases=False))
            write_json(again, logged, log.case_texts())
        assert json_report(streamed) == json_report(kept) == json_report(logged)


texts = st.text(max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(texts, inner, max_size=2),
    max_leaves=6,
)
rich_samples = st.builds(
    Sample,
    input=st.none() | texts,
    output=texts,
    expected=st.none() | json_values,
    tool_calls=st.lists(
        st.builds(
            ToolCall,
            texts,
            st.dictionaries(texts, json_values, max_size=2),
            json_values,
            st.none() | texts,
        ),
        max_size=2,
    ),
)


@st.composite
def rich(draw: Any, spec: list[Any], suite_policy: Policy) -> Suite:
    """The cases of `spec`, each with samples holding texts, values and tool calls, a
    transcript's messages on some turns, metadata, tags and attempt indexes; every other one
    graded one at a time (cases end out of order)."""
    cases = []
    for index, (policy, turns) in enumerate(spec):
        kind = Fixed if index % 2 else PooledFixed
        cases.append(
            Case(
                f"c{index}",
                tuple(
                    Turn(
                        draw(rich_samples),
                        tuple(
                            entry(kind(name=name, outcome=outcome, score=score), **keys)
                            for name, outcome, score, keys in graders
                        ),
                        messages=draw(st.none() | st.lists(json_values, max_size=2).map(tuple)),
                    )
                    for graders in turns
                ),
                policy=policy,
                metadata=draw(st.dictionaries(texts, json_values, max_size=2)),
                tags=tuple(draw(st.lists(st.sampled_from(["a", "b", "ü"]), max_size=2))),
                attempt=draw(st.none() | st.integers(0, 3)),
            )
        )
    return Suite("paths", lambda: iter(cases), policy=suite_policy)


@contextlib.contextmanager
def chosen_json_writer(name: str) -> Iterator[None]:
    """JSON written by orjson or, as `GRADEKIT_JSON=stdlib` asks, by the standard library
    (the choice is made once per process: made again here, and again after)."""
    before = os.environ.get(json_text.CHOICE_VARIABLE)
    os.environ[json_text.CHOICE_VARIABLE] = name
    json_text._chosen = None
    try:
        yield
    finally:
        if before is None:
            del os.environ[json_text.CHOICE_VARIABLE]
        else:
            os.environ[json_text.CHOICE_VARIABLE] = before
        json_text._chosen = None


@pytest.mark.parametrize("writer", ["orjson", "stdlib"])
@settings(max_examples=40, deadline=None)
@given(data=st.data(), spec=specs(), policy=POLICIES, cut=st.sampled_from([None, 1, 7, 4096]))
def test_streamed_and_logged_reports_of_rich_cases_equal_the_kept_one(
    writer, data, spec, policy, cut
):
    """With samples of every shape cut at `max_text` (or none: `samples=False`), metadata,
    tags and attempts, the cases a streamed run writes from its batches' texts and the lines
    of a results log are the kept report's cases, whichever writes the JSON."""
    with chosen_json_writer(writer):
        assert (json_text.json_writer() is json_text.STDLIB_WRITER) is (writer == "stdlib")
        check_rich_reports(data, spec, policy, cut)


def check_rich_reports(data: Any, spec: Any, policy: Policy, cut: int | None) -> None:
    suite = data.draw(rich(spec, policy))
    options = Outputs(samples=False) if cut is None else Outputs(max_text=cut)
    with tempfile.TemporaryDirectory() as folder:
        kept, streamed, logged = (Path(folder) / name for name in ("kept", "streamed", "log"))
        full = run_suite(suite, jobs=3, outputs=options)
        write_json(full, kept)
        with CaseStream(streamed, spool=True) as stream:
            streaming = attrs.evolve(options, keep_cases=False, stream=stream)
            report = run_suite(suite, jobs=3, outputs=streaming)
            assert stream.write_json(report) == []
            assert [without_durations(c.to_dict()) for c in stream.cases()] == reports(full)
            failing = [c.name for c in full.cases if c.outcome != "pass"][:FAILING_KEPT]
            assert [c.name for c in stream.failing()] == failing
            assert report.summary == full.summary
        with ResultsLog(Path(folder) / "results.jsonl") as log:
            again = run_suite(
                suite, jobs=3, resume=log, outputs=attrs.evolve(options, keep_cases=False)
            )
            write_json(again, logged, log.case_texts())
            assert again.summary == full.summary
        assert json_report(streamed) == json_report(kept) == json_report(logged)
