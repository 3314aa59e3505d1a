"""A case's JSON text written straight from its parts by a batch's `CaseWriter`
(`gradekit.report.case_writers`) is the text of the `CaseReport` those parts make: part by
part in the standard library's format (`TextCaseWriter`, `report.case_text`: character for
character that library's text), or as the report's `to_dict()` form built from the parts
(`FormCaseWriter`, `report.case_forms`) and written at once (by orjson in a run). Results
with details, errors, advisory ones and weights, samples with tool calls, transcripts and
texts cut at `max_text`, metadata, tags, attempts, skipped turns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradekit import GradeResult, Sample, ToolCall
from gradekit.report.case_forms import ResultDataForm
from gradekit.report.case_text import ResultForm
from gradekit.report.case_writers import CaseWriter, FormCaseWriter, TextCaseWriter
from gradekit.report.json_text import STDLIB_WRITER, json_text
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
def turns(draw: Any, writer: CaseWriter, index: int, max_text: int | None) -> tuple[Any, Any]:
    """A turn report and its part, made by `writer` from the same parts."""
    skipped = draw(st.booleans()) and index > 0
    chosen = () if skipped else tuple(draw(st.lists(records, max_size=3)))
    passed, score, errored = draw(st.booleans()), draw(scores), draw(st.booleans())
    sample = None if skipped or max_text is None else (draw(samples), draw(messages))
    form = None if sample is None else SampleForm(sample[0], sample[1], max_text)
    report = TurnReport(index, passed, score, chosen, errored, skipped, form)
    shown = (
        writer.no_sample
        if sample is None or max_text is None
        else writer.sample(sample[0], sample[1], max_text)
    )
    shown_results = [writer.record(record) for record in chosen]
    return report, writer.turn(index, passed, score, errored, shown_results, skipped, shown)


@st.composite
def cases(draw: Any, writer: CaseWriter) -> tuple[CaseReport, str]:
    """A case report and its text, made by `writer` from the same parts."""
    max_text = draw(st.none() | max_texts)
    made = [draw(turns(writer, index, max_text)) for index in range(draw(st.integers(0, 3)))]
    name, passed, score = draw(texts), draw(st.booleans()), draw(scores)
    errored = draw(st.booleans())
    error, duration = draw(st.none() | texts), draw(durations)
    tags = tuple(draw(st.lists(texts, max_size=3)))
    attempt = draw(st.none() | st.integers(0, 9))
    metadata = None if max_text is None else draw(st.dictionaries(texts, values, max_size=3))
    form = None if metadata is None else SampleForm(metadata, None, max_text)
    parts = (name, passed, score, [part for _, part in made], errored, error, duration)
    report = CaseReport(*parts[:3], tuple(t for t, _ in made), *parts[4:], form, tags, attempt)
    shown = None if metadata is None or max_text is None else writer.metadata(metadata, max_text)
    return report, writer.case(*parts, shown, tags, attempt)


def _form(value: Any) -> Any:
    """A "writer" that hands the form back as it is, to compare it with `to_dict()`."""
    return value


WRITERS = {
    "text": (TextCaseWriter(), STDLIB_WRITER),
    "form, standard library": (FormCaseWriter(STDLIB_WRITER), STDLIB_WRITER),
    "form, orjson": (FormCaseWriter(json_text), json_text),
    "form itself": (FormCaseWriter(_form), lambda data: data),
}


@pytest.mark.parametrize("name", list(WRITERS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_text_made_from_the_parts_is_the_text_of_their_report(name, data):
    writer, expected = WRITERS[name]
    report, text = data.draw(cases(writer))
    assert text == expected(report.to_dict())


@given(records, st.sampled_from(["", "other"]), st.sampled_from(["", "other"]))
def test_an_entry_s_result_form_writes_any_result_of_it(record, kind, name):
    """The parts an entry's results share are written once; a result whose kind or name is
    not the entry's (a grader naming its own) is written with its own."""
    expected = json.dumps(record.to_dict(), ensure_ascii=False)
    assert (
        ResultForm(kind, name, record.advisory, record.weight).text(
            record.result, record.duration_ms
        )
        == expected
    )
    assert (
        ResultDataForm(record.advisory, record.weight).data(record.result, record.duration_ms)
        == record.to_dict()
    )
