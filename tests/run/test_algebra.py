"""Property tests of the composite algebra and of the verdict rules under it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from runner_graders import Fixed, entry

from gradekit import GradeResult, Sample
from gradekit.run.composite import AllOf, AnyOf, AtLeast, Not, Weighted
from gradekit.run.verdict import combine as combine_results

SAMPLE = Sample()

outcomes = st.sampled_from(["pass", "fail", "error"])
scores = st.floats(0.0, 1.0)
weights = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])


@st.composite
def children(draw, min_size=1, max_size=5):
    size = draw(st.integers(min_size, max_size))
    return [
        entry(Fixed(name=f"g{i}", outcome=draw(outcomes), score=draw(scores)), weight=draw(weights))
        for i in range(size)
    ]


def combine(votes, mode, **options):
    """`combine` over votes (outcome, score, weight, advisory): each a result beside its entry."""
    results = [
        GradeResult.of_error("v", "v", "ValueError: broken")
        if outcome == "error"
        else GradeResult("v", "v", outcome == "pass", score)
        for outcome, score, _, _ in votes
    ]
    entries = [
        entry(Fixed(name="v"), weight=weight, advisory=advisory) for _, _, weight, advisory in votes
    ]
    return combine_results(results, entries, mode, **options)


def outcome_score(result):
    return result.outcome, result.score


@given(children(max_size=1))
def test_all_over_one_child_is_that_child(kids):
    child = kids[0].grader.grade(SAMPLE)
    assert outcome_score(AllOf(graders=kids).grade(SAMPLE)) == outcome_score(child)


@given(children(max_size=1))
def test_not_not_is_the_child_and_an_error_stays_an_error(kids):
    child = kids[0].grader.grade(SAMPLE)
    twice = Not(graders=[Not(graders=kids)]).grade(SAMPLE)
    once = Not(graders=kids).grade(SAMPLE)
    assert twice.outcome == child.outcome
    if child.outcome == "error":
        assert once.outcome == "error"
    else:
        assert once.passed is not child.passed
        assert abs(twice.score - child.score) < 1e-12


@given(children())
def test_all_passing_implies_any_passing(kids):
    if AllOf(graders=kids).grade(SAMPLE).passed:
        assert AnyOf(graders=kids).grade(SAMPLE).passed


@given(children(), st.data(), st.floats(0.0, 1.0))
def test_raising_a_childs_score_never_lowers_weighted(kids, data, threshold):
    index = data.draw(st.integers(0, len(kids) - 1))
    old = kids[index].grader
    raised = data.draw(st.floats(old.score, 1.0))
    higher = list(kids)
    higher[index] = entry(
        Fixed(name=old.name, outcome=old.outcome, score=raised), weight=kids[index].weight
    )
    before = Weighted(threshold=threshold, graders=kids).grade(SAMPLE)
    after = Weighted(threshold=threshold, graders=higher).grade(SAMPLE)
    if before.error is None and after.error is None:
        assert after.score >= before.score - 1e-12
    if before.passed:
        assert after.passed


@given(children())
def test_at_least_one_is_any_and_at_least_n_is_all(kids):
    grade = lambda composite: composite.grade(SAMPLE).outcome  # noqa: E731
    assert grade(AtLeast(count=1, graders=kids)) == grade(AnyOf(graders=kids))
    assert grade(AtLeast(count=len(kids), graders=kids)) == grade(AllOf(graders=kids))


@given(st.lists(st.tuples(outcomes, scores, weights, st.booleans()), max_size=6), scores)
def test_an_error_never_becomes_a_pass_by_negation_or_threshold(votes, threshold):
    # Replacing every errored vote by any decided vote never turns a fail into a pass or back:
    # an undecided combination is an error, a decided one is the same whatever the errors were.
    for mode in ("all", "any", "weighted", "at_least"):
        verdict = combine(votes, mode, threshold=threshold, count=1)
        for fill in (("pass", 1.0), ("fail", 0.0)):
            filled = [
                (fill[0], fill[1], w, a) if o == "error" else (o, s, w, a) for o, s, w, a in votes
            ]
            decided = combine(filled, mode, threshold=threshold, count=1)
            if verdict.outcome != "error":
                assert decided.outcome == verdict.outcome


def test_a_weighted_mean_equal_to_the_threshold_passes_despite_float_rounding():
    # Three scores of 0.7 add up to 2.0999999999999996: their mean is 0.7 but for the last bit.
    votes = [("pass", 0.7, 1.0, False)] * 3
    assert combine(votes, "weighted", threshold=0.7).outcome == "pass"
    kids = [entry(Fixed(name=f"g{i}", outcome="pass", score=0.7)) for i in range(3)]
    assert Weighted(threshold=0.7, graders=kids).grade(SAMPLE).outcome == "pass"
    assert combine(votes, "weighted", threshold=0.71).outcome == "fail"


def test_a_weighted_mean_that_reaches_the_threshold_whatever_the_errors_score_passes():
    # The errored result could score 0 to 1: the mean is 0.5 to 1.0, at least the threshold.
    votes = [("pass", 1.0, 1.0, False), ("error", 0.0, 1.0, False)]
    assert combine(votes, "weighted", threshold=0.5).outcome == "pass"
    assert combine(votes, "weighted", threshold=0.6).outcome == "error"  # 0.5 to 1.0: undecided


def test_errors_are_never_a_failure_nor_a_pass():
    error = [("error", 0.0, 1.0, False)]
    assert combine(error, "all").outcome == "error"
    assert combine(error, "weighted", threshold=0.0).outcome == "error"  # no score at all
    assert combine(error, "weighted", threshold=0.1).outcome == "error"
    assert combine([("pass", 1.0, 1.0, False), *error], "any").outcome == "pass"
    assert combine([("fail", 0.0, 1.0, False), *error], "any").outcome == "error"
    assert combine([("pass", 1.0, 1.0, False), ("error", 0.0, 1.0, True)], "all").outcome == "pass"
    assert combine([], "all").outcome == "pass"
