"""The baseline marks follow the one rule of `gradekit compare` (hypothesis compares the two on
random pairs of runs), and the JSON a mark is written into stays the same JSON."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from gradekit.history.baseline import Baseline
from gradekit.history.compare import compare, mark_of
from gradekit.report.json import case_json
from gradekit.report.model import CaseReport

OUTCOMES = ("pass", "fail", "error")


def _case(name: str, outcome: str, attempt: int | None = None) -> CaseReport:
    return CaseReport(name, outcome == "pass", 1.0 if outcome == "pass" else 0.0,
                      errored=outcome == "error", attempt=attempt)  # fmt: skip


def test_the_rule_for_each_pair_of_outcomes() -> None:
    table = {(was, now): mark_of(was, now) for was in (None, *OUTCOMES) for now in OUTCOMES}
    assert table == {
        (None, "pass"): "new", (None, "fail"): "new", (None, "error"): "new",
        ("pass", "pass"): "unchanged", ("pass", "fail"): "regressed",
        ("pass", "error"): "regressed",
        ("fail", "pass"): "fixed", ("fail", "fail"): "unchanged", ("fail", "error"): "unchanged",
        ("error", "pass"): "fixed", ("error", "fail"): "unchanged",
        ("error", "error"): "unchanged",
    }  # fmt: skip


# A case is told apart by its name and, for one of several attempts, the attempt index.
keys = st.tuples(st.sampled_from("abcdefgh"), st.sampled_from((None, 0, 1)))
runs = st.dictionaries(keys, st.sampled_from(OUTCOMES), max_size=8)


@given(runs, runs)
def test_the_marks_agree_with_compare(
    before: dict[tuple[str, int | None], str], after: dict[tuple[str, int | None], str]
) -> None:
    base = [_case(name, outcome, attempt) for (name, attempt), outcome in before.items()]
    new = [_case(name, outcome, attempt) for (name, attempt), outcome in after.items()]
    comparison = compare(base, new)
    marks = Baseline.load(base).tally().add_all(new).marks()
    by_mark = {mark: set(names) for mark, names in marks.names.items()}
    assert by_mark["regressed"] == {change.label for change in comparison.regressed}
    assert by_mark["fixed"] == {change.label for change in comparison.fixed}
    assert by_mark["new"] == {change.label for change in comparison.new}
    assert set(marks.removed_names) == {change.label for change in comparison.removed}
    assert sum(marks.counts.values()) == len(new)
    assert marks.still_failing == sum(
        1 for n, o in after.items() if o != "pass" and before.get(n, "pass") != "pass"
    )


@given(st.text(), st.sampled_from(OUTCOMES), st.booleans())
def test_a_mark_written_into_a_cases_json_keeps_it_json(
    name: str, outcome: str, known: bool
) -> None:
    case = _case(name, outcome)
    marks = Baseline.load([_case(name, "pass")] if known else []).tally().marks()
    text = marks.mark_text(case_json(case))
    data = json.loads(text)
    assert data == {**case.to_dict(), "baseline": marks.mark(case)}
    assert json.loads(marks.mark_text(text)) == data  # marked again: replaced, not repeated


@given(st.permutations(range(12)), st.sampled_from((3, 12)))
def test_the_names_of_a_mark_are_in_suite_order_whatever_order_the_cases_end_in(
    arrival: list[int], named: int
) -> None:
    # Cases end in any order under --jobs or a cluster; the lists name them as the suite does,
    # the first MAX_NAMED of them when there are more.
    import gradekit.history.baseline as baseline_module

    base = [_case(f"c{index}", "pass") for index in range(12)]
    tally = Baseline.load(base).tally()
    saved = baseline_module.MAX_NAMED
    baseline_module.MAX_NAMED = named
    try:
        for position in arrival:
            tally.add(_case(f"c{position}", "fail" if position % 2 else "pass"), position)
        marks = tally.marks()
    finally:
        baseline_module.MAX_NAMED = saved
    assert marks.names["regressed"] == tuple(f"c{i}" for i in range(1, 12, 2))[:named]
    assert marks.names["unchanged"] == tuple(f"c{i}" for i in range(0, 12, 2))[:named]
    assert marks.counts["regressed"] == marks.counts["unchanged"] == 6
