"""GraderContext: what a code grader reads, built from the Sample, immutable all the way down."""

from __future__ import annotations

import re

import attrs
import my_benchmarks
import pytest

from gradekit import Sample, ToolCall
from gradekit.code import GraderContext, GraderResult
from gradekit.graders.user_code import Code


def make_sample() -> Sample:
    earlier = Sample(case="growth", turn=0, input="first?", output="1")
    return Sample(
        case="growth",
        turn=1,
        input="What was the growth rate?",
        output="14.14%",
        expected="0.14136",
        tool_calls=[{"name": "calculator", "arguments": {"expr": "a/b"}}],
        context=["doc one", "doc two"],
        history=[earlier],
        workspace="/tmp/ws",
        metadata={"turn_program": "divide(a, b)", "tags": ["finance"]},
    )


def test_fields_come_from_the_sample() -> None:
    sample = make_sample()
    ctx = GraderContext.from_sample(sample)
    assert ctx.turn_input == "What was the growth rate?"
    assert ctx.agent_response == "14.14%"
    assert ctx.ground_truth == "0.14136"
    assert ctx.tool_invocations == (ToolCall("calculator", {"expr": "a/b"}),)
    assert ctx.retrieval_context == ("doc one", "doc two")
    assert ctx.turn_index == 1
    assert ctx.test_case_name == "growth"
    assert ctx.sample is sample
    assert ctx.sample.history[0].output == "1"
    assert ctx.sample.workspace == "/tmp/ws"


def test_turn_config_holds_the_turns_own_keys() -> None:
    ctx = GraderContext.from_sample(make_sample())
    assert dict(ctx.turn_config) == {
        "input": "What was the growth rate?",
        "output": "14.14%",
        "expected": "0.14136",
        "tool_calls": (ToolCall("calculator", {"expr": "a/b"}),),
        "context": ("doc one", "doc two"),
        "workspace": "/tmp/ws",
        "turn_program": "divide(a, b)",
        "tags": ("finance",),
    }


def test_unset_fields() -> None:
    ctx = GraderContext.from_sample(Sample(case="c"))
    assert ctx.agent_response == ""
    assert ctx.ground_truth is None
    assert ctx.turn_input is None
    assert ctx.tool_invocations == ()
    assert ctx.retrieval_context is None
    assert dict(ctx.turn_config) == {}


def test_context_attributes_cannot_be_set() -> None:
    ctx = GraderContext.from_sample(make_sample())
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ctx.agent_response = "changed"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ctx.turn_config = {}  # type: ignore[misc]
    assert ctx.agent_response == "14.14%"


def test_context_collections_cannot_be_changed() -> None:
    ctx = GraderContext.from_sample(make_sample())
    message = "this mapping is read-only: graders may not change sample data; copy it with dict()"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        ctx.turn_config["output"] = "changed"  # type: ignore[index]
    with pytest.raises(AttributeError):
        ctx.turn_config["tags"].append("x")
    with pytest.raises(TypeError):
        ctx.tool_invocations[0].arguments["expr"] = "changed"  # type: ignore[index]
    with pytest.raises(TypeError):
        ctx.sample.metadata["turn_program"] = "changed"
    with pytest.raises(AttributeError):
        ctx.tool_invocations.append(ToolCall("other"))  # type: ignore[attr-defined]
    assert ctx.turn_config["output"] == "14.14%"


def test_a_grader_cannot_change_what_the_next_grader_sees() -> None:
    sample = make_sample()
    result = Code(grader="my_benchmarks:tries_to_mutate").grade(sample)
    assert (result.passed, result.error) == (True, None)
    Code(grader="my_benchmarks:records_context").grade(sample)
    seen = my_benchmarks.CONTEXTS[-1]
    assert seen.agent_response == "14.14%"
    assert seen.turn_config["output"] == "14.14%"
    assert dict(seen.tool_invocations[0].arguments) == {"expr": "a/b"}


def test_grader_result_is_frozen() -> None:
    result = GraderResult(0.5, passed=True, reason="r", details={"a": 1})
    assert (result.score, result.passed, result.reason, result.details) == (
        0.5,
        True,
        "r",
        {"a": 1},
    )
    assert GraderResult(0.5) == GraderResult(0.5, None, None, None)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.score = 1.0  # type: ignore[misc]


def test_reads_turn_config_through_the_grader() -> None:
    sample = Sample(case="c", output="3", metadata={"turn_program": "add(1, 2)"})
    result = Code(grader="my_benchmarks:reads_turn_config").grade(sample)
    assert (result.passed, result.score, dict(result.details or {})) == (
        True,
        1.0,
        {"program": "add(1, 2)"},
    )
