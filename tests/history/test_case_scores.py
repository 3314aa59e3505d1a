"""What `compare` reads of each case (`gradekit.history.case_scores`): the same from a JSON
report, from a results log and from the report objects, without building case reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from case_strategies import cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradekit import ConfigError
from gradekit.history.case_scores import SeenReader, read_seen
from gradekit.report.json import case_json
from gradekit.report.model import CaseReport, SuiteReport


def _reports(draw: Any) -> list[CaseReport]:
    return list(draw(st.lists(cases(), max_size=5)))


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), indent=st.sampled_from([None, 2]))
def test_a_report_file_a_log_and_the_objects_read_the_same(
    tmp_path: Path, data: st.DataObject, indent: int | None
) -> None:
    reports = _reports(data.draw)
    report = tmp_path / "report.json"
    forms = [case.to_dict() for case in reports]
    report.write_text(json.dumps({"suite": "s", "cases": forms}, indent=indent), encoding="utf-8")
    log = tmp_path / "run.jsonl"
    log.write_text("".join(case_json(case) + "\n" for case in reports), encoding="utf-8")

    from_objects = read_seen(SuiteReport(suite="s", cases=tuple(reports)))

    assert read_seen(report) == from_objects
    assert read_seen(log) == from_objects


def test_in_a_resumed_log_the_last_copy_of_a_case_counts(tmp_path: Path) -> None:
    lines = [
        {"name": "twice", "passed": False, "turns": []},
        {"name": "once", "passed": True, "turns": []},
        {"name": "twice", "passed": True, "turns": []},
    ]
    log = tmp_path / "run.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    seen, _ = read_seen(log)

    assert [(key, found.outcome) for key, found in seen.items()] == [
        (("twice", None), "pass"),
        (("once", None), "pass"),
    ]


def test_scores_are_those_of_results_that_did_not_error(tmp_path: Path) -> None:
    case = {
        "name": "c",
        "passed": False,
        "turns": [
            {"index": 0, "results": [{"name": "a", "score": 0.5, "error": None}]},
            {"index": 1, "results": [{"name": "a", "score": 0.0, "error": "E: x"}]},
        ],
    }
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"cases": [case]}), encoding="utf-8")

    seen, environment = read_seen(path)

    assert list(seen) == [("c", None)]
    assert seen["c", None].outcome == "fail"
    assert seen["c", None].scores() == {(0, "a"): 0.5}
    assert environment is None


def test_a_grader_named_twice_on_a_turn_counts_as_its_last_score(tmp_path: Path) -> None:
    results = [
        {"name": "same", "score": 0.25, "error": None},
        {"name": "other", "score": 1.0, "error": None},
        {"name": "same", "score": 0.75, "error": None},
    ]
    case = {"name": "c", "passed": True, "turns": [{"index": 0, "results": results}]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"cases": [case, dict(case, name="d")]}), encoding="utf-8")

    seen, _ = read_seen(path)

    assert seen["c", None].scores() == {(0, "same"): 0.75, (0, "other"): 1.0}
    assert seen["c", None].layout == seen["d", None].layout


def test_turns_and_results_may_be_left_out_but_not_the_outcome(tmp_path: Path) -> None:
    # As `CaseReport.from_dict` reads them: a case without turns, a turn without results.
    cases = [{"name": "a", "passed": True}, {"name": "b", "passed": False, "turns": [{"index": 0}]}]
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"cases": cases}), encoding="utf-8")

    seen, _ = read_seen(path)

    assert {key: (found.outcome, found.scores()) for key, found in seen.items()} == {
        ("a", None): ("pass", {}),
        ("b", None): ("fail", {}),
    }
    path.write_text(json.dumps({"cases": [{"name": "c"}]}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"report\.json is not a gradekit report.*'passed'"):
        read_seen(path)


def test_cases_graded_alike_in_both_runs_share_one_layout(tmp_path: Path) -> None:
    case = {
        "name": "c",
        "passed": True,
        "turns": [{"index": 0, "results": [{"name": "g", "score": 1.0}]}],
    }
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    base.write_text(json.dumps({"cases": [case]}), encoding="utf-8")
    new.write_text(json.dumps({"cases": [dict(case, passed=False)]}), encoding="utf-8")

    layouts = SeenReader()
    before, _ = read_seen(base, None, layouts)
    after, _ = read_seen(new, None, layouts)

    assert before["c", None].layout is after["c", None].layout
