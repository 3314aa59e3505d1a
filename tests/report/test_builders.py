"""The runner's builders of report objects, and `checked_result`, make exactly what the
constructors make: every field, for any values."""

from __future__ import annotations

import pickle

import attrs
from hypothesis import given
from hypothesis import strategies as st

from gradekit import GradeResult, Sample
from gradekit._types import checked_result
from gradekit.report.builders import case_report, result_record, turn_report
from gradekit.report.model import CaseReport, ResultRecord, TurnReport
from gradekit.report.samples import SampleForm

texts = st.text(max_size=8)
scores = st.floats(0.0, 1.0)
durations = st.floats(0.0, 1e6)
details = st.none() | st.dictionaries(texts, st.integers() | texts, max_size=3)
results = st.builds(
    GradeResult, texts, texts, st.booleans(), scores, texts, details, st.none(), durations
) | st.builds(GradeResult.of_error, texts, texts, texts.map(lambda t: f"ValueError: {t}"))


def same(built: object, constructed: object) -> None:
    """Equal in every attrs field, in repr and after pickling: the same object."""
    assert type(built) is type(constructed)
    for field in attrs.fields(type(constructed)):
        assert getattr(built, field.name) == getattr(constructed, field.name), field.name
    assert built == constructed
    assert repr(built) == repr(constructed)
    assert pickle.loads(pickle.dumps(built)) == constructed


@given(st.tuples(texts, texts, st.booleans(), scores, texts, details))
def test_checked_result_is_the_constructed_result(values):
    built, constructed = checked_result(*values), GradeResult(*values)
    same(built, constructed)
    assert vars(built) == vars(constructed)
    assert attrs.evolve(built, duration_ms=1.5) == attrs.evolve(constructed, duration_ms=1.5)


@given(st.tuples(results, st.booleans(), st.floats(0.0, 5.0), durations))
def test_result_record_is_the_constructed_record(values):
    same(result_record(*values), ResultRecord(*values))


records = st.builds(ResultRecord, results, st.booleans(), st.floats(0.0, 5.0), durations)
record_tuples = st.lists(records, max_size=3).map(tuple)
flags = st.booleans()
samples = st.none() | st.builds(lambda text: SampleForm(Sample(output=text)), texts)
metadata = st.none() | st.builds(SampleForm, st.dictionaries(texts, texts, max_size=2))


@given(st.tuples(st.integers(0, 9), flags, scores, record_tuples, flags, flags, samples))
def test_turn_report_is_the_constructed_turn(values):
    same(turn_report(*values), TurnReport(*values))


turns = st.lists(st.builds(TurnReport, st.integers(0, 9), flags, scores, record_tuples))


tag_tuples = st.lists(texts, max_size=3).map(tuple)


@given(
    st.tuples(
        texts,
        flags,
        scores,
        turns.map(tuple),
        flags,
        st.none() | texts,
        durations,
        metadata,
        tag_tuples,
    )
)
def test_case_report_is_the_constructed_case(values):
    same(case_report(*values), CaseReport(*values))
