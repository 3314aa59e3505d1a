"""run_suite and grade: verdicts, order, failure isolation, fail_on_error, bounded memory."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator

import pytest
from runner_graders import (
    AsyncEcho,
    Echo,
    Fixed,
    Returns,
    Sleep,
    entry,
    one_turn_suite,
)

import gradekit
from gradekit import GraderDefaults, GradeResult, Outputs, Sample, Statistics
from gradekit.registry.entries import GraderEntry
from gradekit.run.loop import BATCH_SIZE
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Policy, Suite, Turn


def results_of(report, case_index=0, turn_index=0):
    turn = report.cases[case_index].turns[turn_index]
    return {record.result.name: record.result for record in turn.results}


@pytest.mark.parametrize(
    ("entry_timeout", "run_timeout", "suite_timeout", "times_out"),
    [
        (None, None, 0.2, True),  # the suite's default
        (None, 5.0, 0.2, False),  # the run's override beats the suite
        (0.2, 5.0, 5.0, True),  # the entry beats the run
        (5.0, 0.2, 0.2, False),
    ],
)
def test_timeout_precedence(entry_timeout, run_timeout, suite_timeout, times_out):
    suite = one_turn_suite(
        [entry(Sleep(seconds=0.6), timeout=entry_timeout)], ["0"], timeout=suite_timeout
    )
    report = run_suite(suite, defaults=GraderDefaults(timeout=run_timeout))
    result = results_of(report)["sleep"]
    assert (result.error is not None) is times_out
    if times_out:
        assert result.error == "TimeoutError: grader 'sleep' exceeded 0.2s"


def test_cases_keep_the_suite_order_whatever_order_they_finish_in():
    outputs = [str(i % 4) for i in range(80)]
    graders = [entry(Echo(jitter=0.03)), entry(AsyncEcho(jitter=0.03))]
    suite = one_turn_suite(graders, outputs)
    finished: list[str] = []
    threads: set[str] = set()

    def on_case(case):
        finished.append(case.name)
        threads.add(threading.current_thread().name)

    report = run_suite(suite, jobs=16, on_case=on_case)
    names = [f"c{i}" for i in range(80)]
    assert [case.name for case in report.cases] == names
    assert sorted(finished) == sorted(names) and finished != names
    assert threads == {threading.current_thread().name}
    for case, output in zip(report.cases, outputs, strict=True):
        assert case.turns[0].results[0].result.message == output
        assert case.passed is (output == "0")


def test_fail_on_error_skips_the_later_turns_of_its_case_only():
    def turns(first_outcome):
        sample = Sample(output="0", expected="0")
        first = (entry(Fixed(outcome=first_outcome), fail_on_error=True), entry(Echo()))
        return (Turn(sample, first), Turn(sample, (entry(Echo()),)), Turn(sample, (entry(Echo()),)))

    cases = [Case("broken", turns("error")), Case("fine", turns("pass"))]
    report = run_suite(Suite("s", lambda: iter(cases)))
    broken, fine = report.cases
    assert broken.outcome == "error" and broken.errored
    assert [turn.skipped for turn in broken.turns] == [False, True, True]
    assert broken.turns[0].results[1].result.passed  # the other grader of that turn still ran
    data = broken.to_dict()["turns"]
    assert data[1]["skipped"] is True and data[1]["results"] == []
    assert fine.outcome == "pass" and [t.skipped for t in fine.turns] == [False] * 3


def test_what_a_grader_returns_is_checked_per_grader():
    cyclic: dict = {}
    cyclic["self"] = cyclic
    makers = {
        "wrong_type": lambda: {"passed": True},
        "nan_details": lambda: GradeResult(
            "r", "nan_details", True, 1.0, details={"x": [math.nan]}
        ),
        "set_details": lambda: GradeResult("r", "set_details", True, 1.0, details={"s": {1}}),
        "cyclic": lambda: GradeResult("r", "cyclic", True, 1.0, details=cyclic),
        "int_passed": lambda: GradeResult("r", "int_passed", 1, 1.0),
        "nan_score": lambda: GradeResult("r", "nan_score", True, math.nan),
        "raises": lambda: 1 / 0,
    }
    graders = [entry(Returns(name, make)) for name, make in makers.items()] + [entry(Echo())]
    report = run_suite(one_turn_suite(graders, ["0"]))
    errors = {name: result.error for name, result in results_of(report).items()}
    assert errors == {
        "wrong_type": "TypeError: grader 'wrong_type' returned dict, not GradeResult; "
        "return gradekit.GradeResult(kind, name, passed, score, ...)",
        "nan_details": "ValueError: grader 'nan_details' returned details that are not JSON "
        "($.x[0] is nan); details may hold only dict, list, str, int, float, bool and None",
        "set_details": "TypeError: grader 'set_details' returned details that are not JSON "
        "($.s is a set); details may hold only dict, list, str, int, float, bool and None",
        "cyclic": "ValueError: grader 'cyclic' returned details that are not JSON "
        "($.self contains itself); details may hold only dict, list, str, int, float, bool "
        "and None",
        "int_passed": "TypeError: grader 'int_passed' returned passed=1 (int); "
        "set passed to True or False",
        "nan_score": "ValueError: score must be a finite number in [0, 1], got nan",
        "raises": "ZeroDivisionError: division by zero",
        "echo": None,
    }
    assert all(r.duration_ms >= 0 for r in results_of(report).values())


def test_entry_threshold_decides_passed_but_never_passes_an_error():
    graders = [
        entry(Fixed(name="low", outcome="pass", score=0.4), threshold=0.5),
        entry(Fixed(name="high", outcome="fail", score=0.6), threshold=0.5),
        entry(Fixed(name="broken", outcome="error"), threshold=0.0),
    ]
    results = results_of(run_suite(one_turn_suite(graders, ["0"])))
    assert results["low"].passed is False
    assert results["high"].passed is True
    assert results["broken"].outcome == "error"


def test_turn_policies_and_advisory_results():
    passing, failing = entry(Fixed(name="p")), entry(Fixed(name="f", outcome="fail"))
    broken = entry(Fixed(name="e", outcome="error"))
    advisory_fail = entry(Fixed(name="a", outcome="fail"), advisory=True)

    def outcome(graders, policy=None):
        report = run_suite(one_turn_suite(graders, ["0"], policy=policy or Policy()))
        turn = report.cases[0].turns[0]
        return turn.passed, turn.errored, report.cases[0].outcome

    assert outcome([passing, advisory_fail]) == (True, False, "pass")
    assert outcome([advisory_fail]) == (True, False, "pass")
    assert outcome([passing, failing]) == (False, False, "fail")
    assert outcome([passing, failing], Policy("any")) == (True, False, "pass")
    # An error is never a failure: the case is counted errored, apart from the failed ones.
    assert outcome([passing, broken], Policy("any")) == (True, True, "error")
    assert outcome([failing, broken]) == (False, True, "error")
    weighted = [entry(Fixed(name="w1", score=0.9), weight=3), entry(Fixed(name="w2", score=0.1))]
    assert outcome(weighted, Policy("weighted", 0.7))[0] is True  # (2.7 + 0.1) / 4 = 0.7
    assert outcome(weighted, Policy("weighted", 0.71))[0] is False


def test_an_unloadable_case_is_an_errored_report():
    good = Case("good", (Turn(Sample(output="0", expected="0"), (entry(Fixed()),)),))
    bad = Case("line 2", (), error="ValueError: line 2 is not JSON; fix the dataset line")
    report = run_suite(Suite("s", lambda: iter([good, bad, good])))
    assert [case.outcome for case in report.cases] == ["pass", "error", "pass"]
    assert report.cases[1].error == "ValueError: line 2 is not JSON; fix the dataset line"
    assert report.summary.errored == 1 and report.summary.passed == 2


def test_keep_cases_false_reads_cases_lazily_with_a_bounded_window():
    produced = 0
    delivered = 0
    most_in_flight = 0
    total = 6 * BATCH_SIZE + 7

    def cases() -> Iterator[Case]:
        nonlocal produced
        for index in range(total):
            produced += 1
            sample = Sample(output=str(index % 2), expected="0")
            yield Case(f"c{index}", (Turn(sample, (entry(Fixed()), entry(Echo()))),))

    def on_case(case):
        nonlocal delivered, most_in_flight
        delivered += 1
        most_in_flight = max(most_in_flight, produced - delivered)

    report = run_suite(
        Suite("s", cases), jobs=4, on_case=on_case, outputs=Outputs(keep_cases=False)
    )
    assert report.cases == ()
    assert report.summary.cases == total and delivered == total
    assert report.summary.passed == (total + 1) // 2
    assert most_in_flight <= 4 + 4 * BATCH_SIZE + 1


def test_jobs_is_validated():
    suite = one_turn_suite([entry(Fixed())], ["0"])
    with pytest.raises(ValueError, match=r"^jobs must be a whole number >= 1, got 0$"):
        run_suite(suite, jobs=0)
    with pytest.raises(ValueError, match=r"^isolation must be 'thread' or 'process', got 'x'$"):
        run_suite(suite, defaults=GraderDefaults(isolation="x"))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: GraderDefaults(memory_limit_mb=0), r"^memory_limit_mb must be > 0, got 0$"),
        (lambda: GraderDefaults(sandbox="x"), r"^sandbox: expected one of 'auto', 'bwrap'"),
        (lambda: Outputs(max_text=0), r"^max_text must be a whole number of bytes >= 1, got 0$"),
        (lambda: Statistics(k=(0,)), r"^each k must be a whole number >= 1, got 0$"),
        (lambda: Statistics(confidence=1.0), r"^the confidence level must be a number between"),
    ],
)
def test_the_run_options_are_checked_when_made(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_the_run_options_read_as_given():
    assert GraderDefaults(timeout=5).timeout == 5.0
    assert Statistics(k=[1, 5]).k == (1, 5)
    assert Outputs() == Outputs(keep_cases=True, samples=True, max_text=4096, stream=None)


def test_run_suite_takes_at_most_eight_keyword_arguments():
    import inspect

    keywords = [
        p for p in inspect.signature(run_suite).parameters.values() if p.kind is p.KEYWORD_ONLY
    ]
    assert len(keywords) <= 8


def test_a_stream_and_a_results_log_are_not_given_together(tmp_path):
    from gradekit.run.stream import CaseStream

    suite = one_turn_suite([entry(Fixed())], ["0"])
    refused = pytest.raises(ValueError, match=r"^give a results log \(resume=\) or a stream")
    with CaseStream(str(tmp_path / "r.json"), spool=False) as stream, refused:
        run_suite(suite, resume=tmp_path / "r.jsonl", outputs=Outputs(stream=stream))
    assert not (tmp_path / "r.jsonl").exists()


def test_on_case_errors_propagate():
    suite = one_turn_suite([entry(Fixed())], ["0"] * 10)

    def on_case(case):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_suite(suite, on_case=on_case)


def test_grade_one_sample_with_graders_or_entries():
    sample = Sample(output="0", expected="0")
    results = gradekit.grade(
        sample,
        [Echo(), entry(Fixed(name="f", score=0.3), threshold=0.5), AsyncEcho(), Sleep(seconds=5)],
        timeout=0.5,
    )
    assert [r.name for r in results] == ["echo", "f", "aecho", "sleep"]
    assert [r.outcome for r in results] == ["pass", "fail", "pass", "error"]
    assert results[3].error == "TimeoutError: grader 'sleep' exceeded 0.5s"


def test_grade_works_inside_a_running_event_loop():
    async def notebook_cell():
        return gradekit.grade(Sample(output="0", expected="0"), [AsyncEcho()])

    (result,) = asyncio.run(notebook_cell())
    assert result.passed


def test_grade_rejects_what_is_not_a_grader():
    with pytest.raises(TypeError, match=r"^expected a grader or a GraderEntry, got int; "):
        gradekit.grade(Sample(), [3])


def test_fail_on_error_in_an_inline_batch():
    sample = Sample(output="0", expected="0")
    broken = (entry(Fixed(outcome="error"), fail_on_error=True), entry(Fixed(name="other")))
    later = (entry(Fixed()),)
    cases = [
        Case("broken", (Turn(sample, broken), Turn(sample, later))),
        Case("fine", (Turn(sample, later), Turn(sample, later))),
    ]
    report = run_suite(Suite("s", lambda: iter(cases)))
    assert [case.outcome for case in report.cases] == ["error", "pass"]
    assert [turn.skipped for turn in report.cases[0].turns] == [False, True]
    assert report.cases[0].turns[0].results[1].result.passed


def test_a_subclass_that_overrides_grade_has_its_results_checked_again():
    # Built-in kinds vouch for their own results (`well_formed`); an override does not.
    from gradekit.graders.equality import Equality

    class Careless(Equality):
        def grade(self, sample):
            return GradeResult("equality", self.name, True, 1.0, details={"x": math.nan})

    report = run_suite(one_turn_suite([entry(Careless())], ["0"]))
    result = results_of(report)["equality"]
    assert result.outcome == "error"
    assert result.error.startswith("ValueError: grader 'equality' returned details that are not")


def test_a_built_in_grader_under_another_entry_name_reports_the_entry_name():
    grader = gradekit.create("equality")
    renamed = GraderEntry(grader=grader, kind="equality", name="renamed")
    report = run_suite(one_turn_suite([renamed], ["0", "1"]))
    assert [case.turns[0].results[0].result.name for case in report.cases] == ["renamed"] * 2
    assert set(report.summary.graders) == {"renamed"}
