"""The wire format: a case sent as a line and built again as a worker builds it is the same
case, sample for sample and entry for entry (no cluster needed: reports show only what graders
saw, so the samples themselves are compared here)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from dask_suites import write_mixed_suite

import gradekit
from gradekit.registry.entries import GraderEntry
from gradekit.run.dask.pack import OWN_GRADERS, CasePacker, suite_spec
from gradekit.run.dask.worker import Unavailable, _build, _case
from gradekit.run.settings import Settings
from gradekit.suite.model import Case, Suite, Turn

COMMON = ("kind", "name", "weight", "advisory", "threshold", "timeout", "isolation")
MORE = ("fail_on_error", "config", "location")


def entry_fields(entry: GraderEntry) -> tuple[Any, ...]:
    return tuple(getattr(entry, key) for key in COMMON + MORE)


def rebuilt(suite: Suite) -> list[tuple[Case, Case]]:
    packer = CasePacker(suite)
    spec = suite_spec(suite, Settings(timeout=7.0), 3, packer)
    built = _build(json.loads(spec), "tcp://here:1")
    return [(case, _case(built, packer.line(case), "tcp://here:1")) for case in suite.cases()]


def assert_same_case(original: Case, again: Case) -> None:
    assert again.error is None, again.error
    assert again.name == original.name and again.policy == original.policy
    assert len(again.turns) == len(original.turns)
    for before, after in zip(original.turns, again.turns, strict=True):
        assert after.sample == before.sample  # history, tool calls, metadata, workspace...
        assert [entry_fields(e) for e in after.graders] == [entry_fields(e) for e in before.graders]
        for old, new in zip(before.graders, after.graders, strict=True):
            assert not isinstance(new.grader, Unavailable), new.grader.error
            assert type(new.grader) is type(old.grader)
            if type(old.grader).__eq__ is not object.__eq__:
                assert new.grader == old.grader


def test_every_case_of_a_suite_file_is_built_again_the_same(tmp_path: Path) -> None:
    suite = gradekit.load_suite(write_mixed_suite(tmp_path, "pack_mixed_graders", lines=30))
    pairs = [pair for pair in rebuilt(suite) if pair[0].error is None]
    assert len(pairs) == 35
    for original, again in pairs:
        assert_same_case(original, again)


def test_entries_whose_kind_took_threshold_and_timeout_travel_as_resolved(
    tmp_path: Path,
) -> None:
    (tmp_path / "pack_kinds_graders.py").write_text("def yes(ctx):\n    return 0.8\n")
    (tmp_path / "suite.yaml").write_text(
        textwrap.dedent(
            """
            name: routed
            graders:
              - {kind: code, grader: "pack_kinds_graders:yes", threshold: 0.7, timeout: 3}
              - {kind: program, command: ["true"], name: runs}
              - {kind: program, command: ["true"], timeout: 4, name: runs-4, weight: 0.5}
              - {kind: numeric, threshold: 0.5, advisory: true, isolation: process}
            cases:
              - {name: one, output: "1", expected: 1}
            """
        ),
        encoding="utf-8",
    )
    suite = gradekit.load_suite(tmp_path / "suite.yaml")
    ((original, again),) = rebuilt(suite)
    assert_same_case(original, again)
    code, runs, runs_4, numeric = again.turns[0].graders
    assert (code.threshold, code.config["threshold"], code.timeout) == (None, 0.7, 3.0)
    assert (runs.timeout, "timeout" in runs.config) == (runs.grader.timeout + 5.0, False)
    assert (runs_4.timeout, runs_4.config["timeout"]) == (9.0, 4.0)
    assert (numeric.threshold, numeric.isolation, numeric.advisory) == (0.5, "process", True)


def test_a_case_whose_turns_do_not_start_with_the_suite_graders_lists_them_all() -> None:
    shared = GraderEntry(gradekit.create("equality"), kind="equality", name="equality")
    other = GraderEntry(
        gradekit.create("contains", config={"values": ["x"]}),
        kind="contains",
        name="contains",
        config={"values": ["x"]},
    )
    cases = [
        Case("c", (Turn(gradekit.Sample(case="c", output="x"), (other,)),)),
        Case("d", (Turn(gradekit.Sample(case="d", output="x"), (shared, other)),)),
    ]
    suite = Suite("s", lambda: iter(cases), graders=(shared,))
    packer = CasePacker(suite)
    assert OWN_GRADERS.encode() in packer.line(cases[0])
    assert OWN_GRADERS.encode() not in packer.line(cases[1])
    for original, again in rebuilt(suite):
        assert_same_case(original, again)


def test_a_batch_comes_back_as_texts_outcomes_and_the_summary_of_its_reports() -> None:
    # As a worker returns a batch and the driver of a run that writes only texts takes it.
    from gradekit import GradeResult
    from gradekit.report.json import case_json
    from gradekit.report.model import CaseReport, ResultRecord, TurnReport
    from gradekit.report.summary import SummaryBuilder
    from gradekit.run.dask.pack import case_texts, pack_batch

    def case(
        name: str, passed: bool, error: str | None = None, attempt: int | None = None
    ) -> CaseReport:
        result = (
            GradeResult.of_error("k", "n", error)
            if error
            else GradeResult("k", "n", passed, float(passed), "m", {"a": [1, "x"]})
        )
        turn = TurnReport(0, passed, float(passed), (ResultRecord(result, duration_ms=1.5),))
        return CaseReport(name, passed, float(passed), (turn,), error is not None, attempt=attempt)

    reports = [
        case("a", True),
        case("b", False),
        case("c", False, "E: boom"),
        case("d", True, attempt=2),
    ]

    packed = pack_batch(reports)
    texts = case_texts(packed, [(r.name, r.attempt) for r in reports])

    assert [t.text for t in texts] == [case_json(r) for r in reports]
    assert [t.outcome for t in texts] == ["pass", "fail", "error", "pass"]
    assert [(t.name, t.attempt) for t in texts] == [("a", None), ("b", None), ("c", None), ("d", 2)]
    assert [t.report() for t in texts] == reports
    expected = SummaryBuilder()
    for report in reports:
        expected.add(report)
    assert packed.summary.build() == expected.build()


def test_a_batch_of_another_length_than_sent_is_refused() -> None:
    from gradekit.report.model import CaseReport
    from gradekit.run.dask.pack import case_texts, pack_batch

    packed = pack_batch([CaseReport("a", True, 1.0, ())])

    with pytest.raises(ValueError, match="1 reports and 1 outcomes for a batch of 2 cases"):
        case_texts(packed, [("a", None), ("b", None)])


def test_a_batch_a_worker_refuses_says_why_for_each_case_and_attempt(tmp_path: Path) -> None:
    # A spec in another wire format (a driver of another gradekit version): the worker's
    # reply is the bare JSONL blob every version reads, and the driver keeps each case's
    # name and attempt index, sent with the batch.
    from gradekit.run.dask.executor import _refused
    from gradekit.run.dask.pack import FORMAT, unpack_reports
    from gradekit.run.dask.worker import grade_packed

    suite = gradekit.load_suite(write_mixed_suite(tmp_path, "refused_graders"))
    packer = CasePacker(suite)
    spec = json.loads(suite_spec(suite, Settings(), 1, packer))
    spec["format"] = FORMAT + 1
    cases = list(suite.cases())[:3]
    lines = b"\n".join(packer.line(case) for case in cases)

    reply = grade_packed(json.dumps(spec).encode(), lines)

    assert isinstance(reply, bytes)
    sent = [(case.name, attempt) for case, attempt in zip(cases, (0, 1, None), strict=True)]
    batch = [(n, name, attempt) for n, (name, attempt) in enumerate(sent)]
    errored = _refused(unpack_reports(reply), batch)
    assert [(case.name, case.attempt) for case in errored] == sent
    for case in errored:
        assert case.errored
        assert "install the same gradekit on the driver and on every worker" in str(case.error)
