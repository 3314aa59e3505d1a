"""Optional grader abilities, detected in one place: the inline rule, which the runner's
batches and the composite kinds share."""

from __future__ import annotations

from runner_graders import Fixed, PooledFixed, Where, entry, one_turn_suite

from gradekit.run.composite import AllOf, AnyOf
from gradekit.run.dispatch import is_inline
from gradekit.run.runner import run_suite
from gradekit.run.settings import Settings


def test_the_inline_rule():
    inline = entry(Fixed())
    assert is_inline(inline) and is_inline(inline, Settings())
    assert not is_inline(entry(PooledFixed()))
    # An entry with its own timeout is watched on its own, like any sync grader.
    assert not is_inline(entry(Fixed(), timeout=5))
    # Process isolation, the entry's own or the run's, takes it out of this process.
    assert not is_inline(entry(Fixed(), isolation="process"))
    assert not is_inline(inline, Settings(isolation="process"))
    assert is_inline(entry(Fixed(), isolation="thread"), Settings(isolation="process"))


def test_a_composite_is_inline_when_its_children_are_by_the_same_rule():
    assert AllOf(graders=[Fixed(), entry(Fixed())]).inline
    assert not AllOf(graders=[Fixed(), entry(Fixed(), timeout=5)]).inline
    assert not AllOf(graders=[Fixed(), entry(Fixed(), isolation="process")]).inline
    assert not AllOf(graders=[Fixed(), PooledFixed()]).inline
    assert is_inline(entry(AllOf(graders=[Fixed()])))


def thread_of(report):
    return report.cases[0].turns[0].results[0].result.details["thread"]


def test_sync_graders_with_or_without_a_timeout_are_graded_in_the_lane_s_thread():
    batched = run_suite(one_turn_suite([entry(Where())], ["0"]))
    watched = run_suite(one_turn_suite([entry(Where(), timeout=30)], ["0"]))
    assert thread_of(batched).startswith("gradekit-lane")
    assert thread_of(watched).startswith("gradekit-lane")


def test_a_composite_child_with_its_own_timeout_times_out_on_its_own():
    slow = entry(Where(name="slow", seconds=1.0), timeout=0.2)
    report = run_suite(one_turn_suite([entry(AnyOf(graders=[Fixed(), slow]))], ["0"]))
    result = report.cases[0].turns[0].results[0].result
    children = result.details["results"]
    assert children[1]["error"] == "TimeoutError: grader 'slow' exceeded 0.2s"
    assert result.passed  # `any` with a passing child: the timeout is moot
