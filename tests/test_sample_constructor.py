"""`Sample(...)`: what the constructor makes of every field (each field's converter), and its
signature: the fields, in order, with their defaults."""

from __future__ import annotations

import inspect
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradekit import Sample, ToolCall
from gradekit.core.types import EMPTY, FrozenDict, freeze, frozen_tuple

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
_calls = st.builds(
    ToolCall, st.text(max_size=5), st.dictionaries(st.text(max_size=3), _values, max_size=2)
)
_call_forms = _calls | _calls.map(
    lambda call: {"name": call.name, "arguments": dict(call.arguments)}
)
_sequences = st.lists(_call_forms, max_size=3) | st.lists(_call_forms, max_size=3).map(tuple)


def _expected(  # noqa: PLR0917 - every field of Sample, in order
    case: str,
    turn: int,
    input: Any,
    output: Any,
    expected: Any,
    tool_calls: Any,
    context: Any,
    history: Any,
    workspace: Any,
    metadata: Any,
) -> Sample:
    """The sample the conversion rules give: each value converted here first (the converters
    keep what is converted already)."""
    return Sample(
        case,
        turn,
        freeze(input),
        freeze(output),
        freeze(expected),
        tuple(ToolCall.from_value(call) for call in tool_calls),
        None if context is None else frozen_tuple(context),
        tuple(history),
        workspace,
        EMPTY if metadata is None else freeze(metadata),
    )


@given(
    case=st.text(max_size=5),
    turn=st.integers(0, 5),
    input=_values,
    output=_values,
    expected=_values,
    tool_calls=_sequences,
    context=st.none() | st.lists(_values, max_size=2) | st.tuples(_values),
    metadata=st.none() | st.dictionaries(st.text(max_size=3), _values, max_size=3),
    workspace=st.none() | st.text(max_size=5),
)
def test_every_field_is_converted_by_its_rule(  # noqa: PLR0917 - every field, as given
    case, turn, input, output, expected, tool_calls, context, metadata, workspace
):
    history = (Sample(case=case, output=output),)
    made = Sample(
        case, turn, input, output, expected, tool_calls, context, history, workspace, metadata
    )
    assert made == _expected(
        case, turn, input, output, expected, tool_calls, context, history, workspace, metadata
    )
    keywords = Sample(
        case=case,
        turn=turn,
        input=input,
        output=output,
        expected=expected,
        tool_calls=tool_calls,
        context=context,
        history=list(history),
        workspace=workspace,
        metadata=metadata,
    )
    assert keywords == made
    assert type(made.tool_calls) is tuple
    assert all(type(call) is ToolCall for call in made.tool_calls)
    assert type(made.history) is tuple
    assert type(made.metadata) is FrozenDict


def test_the_parameters_are_the_fields_in_order_with_their_defaults():
    parameters = list(inspect.signature(Sample).parameters.values())
    fields = attrs.fields(Sample)
    assert [parameter.name for parameter in parameters] == [field.name for field in fields]
    assert [parameter.default for parameter in parameters] == [field.default for field in fields]
    assert Sample() == Sample("", 0, None, None, None, (), None, (), None, EMPTY)


def test_converted_values_are_kept_as_they_are():
    calls = (ToolCall("search", {"q": "x"}),)
    metadata = FrozenDict({"k": 1})
    history = (Sample(output="earlier"),)
    sample = Sample(tool_calls=calls, metadata=metadata, history=history)
    assert sample.tool_calls is calls
    assert sample.metadata is metadata
    assert sample.history is history


def test_a_tuple_holding_a_mapping_still_converts_it():
    calls = (ToolCall("a"), {"name": "b", "arguments": {"q": [1]}})
    sample = Sample(tool_calls=calls)
    assert sample.tool_calls == (ToolCall("a"), ToolCall("b", {"q": (1,)}))


def test_metadata_must_be_a_mapping():
    with pytest.raises(TypeError, match="expected a mapping, got"):
        Sample(metadata=["not", "a", "mapping"])  # type: ignore[arg-type]


def test_evolve_converts_what_it_changes():
    sample = attrs.evolve(Sample(output="o"), metadata={"tags": ["x"]}, turn=2)
    assert sample.metadata == FrozenDict({"tags": ("x",)})
    assert (sample.output, sample.turn) == ("o", 2)
