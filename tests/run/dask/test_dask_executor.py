"""The Dask executor through the Python API, on a real two-process LocalCluster: the same
reports as a local run, kinds missing on workers, cases that cannot travel, a worker killed
mid-run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from dask_suites import (
    graded_by,
    killing_the_worker_grading,
    write_graders,
    write_mixed_suite,
    write_slow_suite,
)
from timings import without_durations

import gradekit
from gradekit import DaskExecutor, ExecutorError, GradeResult, Sample
from gradekit.registry.entries import GraderEntry
from gradekit.registry.registry import default_registry
from gradekit.suite.model import Case, Suite, Turn


def report_json(report: gradekit.SuiteReport) -> Any:
    return without_durations([case.to_dict() for case in report.cases])


def test_a_dask_run_reports_exactly_what_a_local_run_does(client: Any, tmp_path: Path) -> None:
    suite = gradekit.load_suite(write_mixed_suite(tmp_path, "api_mixed_graders"))
    local = gradekit.run_suite(suite)
    for mark in (tmp_path / "marks").iterdir():
        mark.unlink()
    streamed: list[str] = []

    remote = gradekit.run_suite(
        suite, executor=DaskExecutor(client=client), on_case=lambda c: streamed.append(c.name)
    )

    assert remote.complete
    assert report_json(remote) == report_json(local)
    assert remote.summary == local.summary
    assert [case.name for case in remote.cases] == [case.name for case in local.cases]
    assert sorted(streamed) == sorted(case.name for case in local.cases)
    # Every case of the report is there once: 5 YAML cases, 300 lines and the broken one.
    assert len(remote.cases) == 306 and len(set(streamed)) == 306
    ended = next(case for case in remote.cases if case.name == "ended-early")
    assert ended.errored and ended.turns[1].skipped
    broken = next(case for case in remote.cases if case.name == "data.jsonl:152")
    assert broken.error is not None and "invalid JSON" in broken.error
    # The code grader ran in the workers' processes, both of them, never in this one.
    graders = {mark.name.rsplit(".", 1)[1] for mark in (tmp_path / "marks").iterdir()}
    workers = set(client.run(os.getpid).values())
    assert graders == {str(pid) for pid in workers}
    assert str(os.getpid()) not in graders
    # The executor given a client leaves it open.
    assert client.status == "running"


def test_a_kind_missing_on_the_workers_is_an_error_result_naming_the_worker(
    client: Any, tmp_path: Path
) -> None:
    def factory(name: str, config: Any) -> Any:
        return gradekit.create("equality", name, config)

    gradekit.register("dasktest.here_only", factory)
    try:
        suite_file = tmp_path / "suite.yaml"
        suite_file.write_text(
            textwrap.dedent(
                """
                name: missing
                graders: [{kind: dasktest.here_only}, {kind: numeric}]
                cases:
                  - {name: one, output: "1", expected: 1}
                  - {name: two, output: "2", expected: 1}
                """
            ),
            encoding="utf-8",
        )
        suite = gradekit.load_suite(suite_file)
        assert gradekit.run_suite(suite).summary.passed == 1  # fine in this process
        report = gradekit.run_suite(suite, executor=DaskExecutor(client=client))
    finally:
        default_registry.unregister("dasktest.here_only")

    assert report.complete and report.summary.errored == 2
    workers = set(client.scheduler_info()["workers"])
    for case in report.cases:
        missing, numeric = case.turns[0].results
        error = missing.result.error
        assert error is not None
        assert error.startswith("UnknownKindError: unknown grader kind 'dasktest.here_only'")
        assert any(f"on Dask worker {address}: " in error for address in workers), error
        assert "every worker needs the suite's kinds installed" in error
        assert numeric.result.error is None  # the other grader still graded
    assert [case.turns[0].results[1].result.passed for case in report.cases] == [True, False]


def test_cases_that_cannot_travel_as_dataset_lines_say_so_and_the_rest_are_graded(
    client: Any,
) -> None:
    numeric = gradekit.create("numeric", config={"absolute_tolerance": 5})
    with_config = GraderEntry(
        numeric, kind="numeric", name="numeric", config={"absolute_tolerance": 5}
    )
    without_config = GraderEntry(numeric, kind="numeric", name="numeric")
    cases = [
        Case("fine", (Turn(Sample(case="fine", output="7", expected=4), (with_config,)),)),
        Case("a-set", (Turn(Sample(case="a-set", output="7", expected={4}), (with_config,)),)),
        Case(
            "no-config",
            (Turn(Sample(case="no-config", output="7", expected=4), (without_config,)),),
        ),
    ]
    suite = Suite("python-built", lambda: iter(cases), case_count=3)

    report = gradekit.run_suite(suite, executor=DaskExecutor(client=client))

    fine, a_set, no_config = report.cases
    assert fine.passed and fine.error is None
    assert a_set.error == (
        "TypeError: case 'a-set'.turns[0].expected is a frozenset: a case travels to Dask "
        "workers as a JSON line and JSON cannot hold this value; give the case JSON values or "
        "grade it with executor local"
    )
    assert no_config.error == (
        "grader 'numeric' (kind 'numeric') cannot be sent to a Dask worker: its entry keeps no "
        "options in `config`, and a worker would create the kind with its defaults, which "
        "differ from this grader; give the entry its options (GraderEntry(config=...)) or "
        "grade it with executor local"
    )
    assert report.summary.passed == 1 and report.summary.errored == 2


def test_a_worker_killed_mid_batch_loses_no_case_and_counts_none_twice(
    client: Any, tmp_path: Path
) -> None:
    suite = gradekit.load_suite(write_slow_suite(tmp_path, "kill_graders"))
    with killing_the_worker_grading(tmp_path, "slow-17", seconds=60) as killed:
        report = gradekit.run_suite(
            suite, jobs=1, executor=DaskExecutor(client=client, batch_size=4)
        )
    assert killed, "slow-17 was never graded"
    # slow-17 was being graded by the killed worker and was graded again by another.
    graders = graded_by(tmp_path, "slow-17")
    assert killed[0] in graders and len(graders) == 2
    assert report.complete
    assert [case.name for case in report.cases] == [f"slow-{n}" for n in range(40)]
    assert [case.passed for case in report.cases] == [n % 2 == 0 for n in range(40)]
    assert all(case.error is None and not case.errored for case in report.cases)
    summary = report.summary
    assert (summary.cases, summary.passed, summary.failed, summary.errored) == (40, 20, 20, 0)
    counts = summary.graders["slow_parity"]
    assert (counts.passed, counts.failed, counts.errored) == (20, 20, 0)


def test_an_unreachable_scheduler_is_an_error_that_says_what_to_check(tmp_path: Path) -> None:
    suite = Suite("s", lambda: iter(()))
    executor = DaskExecutor("tcp://127.0.0.1:9", timeout=0.5)
    with pytest.raises(ExecutorError) as caught:
        gradekit.run_suite(suite, executor=executor)
    message = str(caught.value)
    assert message.startswith("cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    assert message.endswith(
        "check the address (--scheduler or GRADEKIT_DASK_SCHEDULER) and that the scheduler is "
        "running"
    )


def test_without_distributed_the_error_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "import gradekit\n"
        "try:\n"
        "    gradekit.DaskExecutor().connect()\n"
        "except gradekit.ExecutorError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("install it with pip install 'gradekit[dask]'")
    assert out.stdout.startswith("the dask executor needs the distributed package")


def test_a_bad_executor_is_refused() -> None:
    suite = Suite("s", lambda: iter(()))
    message = r"executor must be 'local', 'dask' or a gradekit\.DaskExecutor"
    with pytest.raises(ValueError, match=message):
        gradekit.run_suite(suite, executor="threads")  # type: ignore[arg-type]


def test_a_grade_result_from_a_worker_is_rebuilt_exactly() -> None:
    # The results travel as the JSON of their reports: a result with details survives it.
    from gradekit.report.model import CaseReport, ResultRecord, TurnReport
    from gradekit.run.dask.pack import pack_reports, unpack_reports

    # As the runner records it: the duration it measured is the record's, not the result's.
    result = GradeResult("k", "n", True, 0.25, "m", {"a": [1, "x", None]}, None)
    record = ResultRecord(result, duration_ms=1.5)
    case = CaseReport("c", True, 0.25, (TurnReport(0, True, 0.25, (record,)),))
    assert unpack_reports(pack_reports([case, case])) == [case, case]


@pytest.mark.slow
def test_a_batch_whose_workers_always_die_is_reported_as_errored_cases(
    client: Any, tmp_path: Path
) -> None:
    write_graders(tmp_path, "crash_graders")
    (tmp_path / "suite.yaml").write_text(
        "name: crash\ngraders: [{kind: code, grader: 'crash_graders:crash_on_boom'}]\n"
        "cases:\n  - {name: a}\n  - {name: boom}\n  - {name: c}\n  - {name: d}\n",
        encoding="utf-8",
    )
    suite = gradekit.load_suite(tmp_path / "suite.yaml")

    report = gradekit.run_suite(suite, executor=DaskExecutor(client=client, batch_size=2))

    a, boom, c, d = report.cases
    assert report.complete and c.passed and d.passed
    for case in (a, boom):  # the batch of boom
        assert case.error is not None and case.error.startswith("KilledWorker: ")
        assert case.error.endswith(
            "; the workers grading this batch died: a grader crashes or exhausts its process "
            "(run it with isolation: process, or give the workers more memory)"
        )
