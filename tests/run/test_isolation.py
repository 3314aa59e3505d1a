"""Process isolation: a crashing, exiting, memory-hungry or hung grader costs only its result."""

from __future__ import annotations

import os
import sys
import textwrap
import time

from runner_graders import Crash, Echo, Exit, Hog, Pid, Sleep, entry, one_turn_suite

from gradekit import GraderDefaults
from gradekit.run.runner import run_suite
from gradekit.suite.model import Suite


def results_of(report):
    return {record.result.name: record.result for record in report.cases[0].turns[0].results}


def test_exit_crash_and_memory_give_error_results_for_those_graders_only():
    graders = [
        entry(Exit(), isolation="process"),
        entry(Crash(), isolation="process"),
        entry(Hog(), isolation="process"),
        entry(Echo()),
    ]
    report = run_suite(one_turn_suite(graders, ["0"]), defaults=GraderDefaults(memory_limit_mb=400))
    results = results_of(report)
    assert results["exit"].error == (
        "ChildProcessError: grader 'exit' ended its process with exit code 1 before returning "
        "a result; a grader must return a GradeResult, not exit"
    )
    assert results["crash"].error == (
        "ChildProcessError: grader 'crash' crashed its process (SIGSEGV); fix the grader "
        "(run it with isolation: thread to see the error)"
    )
    assert results["hog"].error == (
        "MemoryError: grader 'hog' exceeded the memory limit of 400 MiB; raise the limit or "
        "fix the grader"
    )
    assert results["echo"].passed and results["echo"].error is None
    assert report.cases[0].outcome == "error"


def test_a_hung_child_is_killed_at_its_timeout():
    graders = [entry(Sleep(), isolation="process", timeout=1), entry(Echo())]
    started = time.monotonic()
    report = run_suite(one_turn_suite(graders, ["0"]))
    assert time.monotonic() - started < 5
    assert results_of(report)["sleep"].error == "TimeoutError: grader 'sleep' exceeded 1s"
    assert results_of(report)["echo"].passed


def test_run_wide_isolation_applies_where_the_entry_sets_none():
    graders = [entry(Pid(name="default")), entry(Pid(name="thread"), isolation="thread")]
    report = run_suite(one_turn_suite(graders, ["0"]), defaults=GraderDefaults(isolation="process"))
    results = results_of(report)
    assert results["default"].details["pid"] != os.getpid()
    assert results["thread"].details["pid"] == os.getpid()
    # The report's duration is what the runner measured (the record's, not the grader's own).
    (default, _) = report.cases[0].turns[0].results
    assert results["default"].passed and default.to_dict()["duration_ms"] > 0


def test_a_grader_module_beside_the_suite_file_imports_in_the_child(tmp_path, monkeypatch):
    (tmp_path / "beside_suite_graders.py").write_text(
        textwrap.dedent(
            """
            import os
            from gradekit import GradeResult

            class Beside:
                kind = "beside"
                name = "beside"

                def grade(self, sample):
                    return GradeResult("beside", "beside", True, 1.0, details={"pid": os.getpid()})
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import beside_suite_graders

    grader = beside_suite_graders.Beside()
    sys.path.remove(str(tmp_path))  # only the suite's folder can lead the child to it now
    base = one_turn_suite([entry(grader, isolation="process")], ["0"])
    suite = Suite(base.name, base.cases, path=str(tmp_path / "suite.yaml"))
    result = results_of(run_suite(suite))["beside"]
    assert result.error is None and result.details["pid"] != os.getpid()
