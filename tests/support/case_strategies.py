"""Hypothesis strategies of case reports for the report tests: results with details, errors,
advisory ones and weights, samples with tool calls, transcripts and texts cut at `max_text`,
metadata, tags, attempts, skipped turns."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from gradekit import GradeResult, Sample, ToolCall
from gradekit.report.model import CaseReport, ResultRecord, TurnReport
from gradekit.report.samples import SampleForm

texts = st.text(max_size=12)
long_texts = st.text(min_size=0, max_size=60)
scores = st.floats(0.0, 1.0)
durations = st.floats(0.0, 1e6)
json_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
details = st.none() | st.dictionaries(texts, json_values, max_size=3)
results = st.builds(
    GradeResult, texts, texts, st.booleans(), scores, long_texts, details
) | st.builds(GradeResult.of_error, texts, texts, texts.map(lambda t: f"ValueError: {t}"))
records = st.builds(
    ResultRecord, results, st.booleans(), st.sampled_from([0.0, 0.5, 1.0, 2, 3.25]), durations
)
# Sample values: texts (cut), numbers, NaN and infinities (shown as their repr), containers.
values = (
    st.none()
    | long_texts
    | st.integers()
    | st.floats()
    | st.booleans()
    | st.lists(json_values, max_size=3)
    | st.dictionaries(texts, json_values, max_size=3)
)
tool_calls = st.builds(
    ToolCall,
    texts,
    st.dictionaries(texts, json_values, max_size=2),
    json_values,
    st.none() | texts,
    st.none() | st.integers(0, 5),
)
samples = st.builds(
    Sample,
    input=values,
    output=values,
    expected=values,
    tool_calls=st.lists(tool_calls, max_size=2),
)
messages = st.none() | st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": long_texts}),
    max_size=2,
).map(tuple)
max_texts = st.sampled_from([1, 5, 16, 4096])


@st.composite
def turns(draw: Any, index: int, max_text: int | None) -> TurnReport:
    """A turn report: results with details, errors, advisory ones and weights, a sample with
    tool calls and a transcript cut at `max_text`, or skipped."""
    skipped = draw(st.booleans()) and index > 0
    chosen = () if skipped else tuple(draw(st.lists(records, max_size=3)))
    passed, score, errored = draw(st.booleans()), draw(scores), draw(st.booleans())
    sample = None if skipped or max_text is None else (draw(samples), draw(messages))
    form = None if sample is None else SampleForm(sample[0], sample[1], max_text)
    return TurnReport(index, passed, score, chosen, errored, skipped, form)


@st.composite
def cases(draw: Any) -> CaseReport:
    """A case report: turns, metadata, tags and an attempt index."""
    max_text = draw(st.none() | max_texts)
    made = tuple(draw(turns(index, max_text)) for index in range(draw(st.integers(0, 3))))
    name, passed, score = draw(texts), draw(st.booleans()), draw(scores)
    errored = draw(st.booleans())
    error, duration = draw(st.none() | texts), draw(durations)
    tags = tuple(draw(st.lists(texts, max_size=3)))
    attempt = draw(st.none() | st.integers(0, 9))
    metadata = None if max_text is None else draw(st.dictionaries(texts, values, max_size=3))
    form = None if metadata is None else SampleForm(metadata, None, max_text)
    return CaseReport(name, passed, score, made, errored, error, duration, form, tags, attempt)
