"""to_records / to_frame: one flat row per result, the same from a report object, a JSON
report and a results log of one real run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import gradekit

SUITE = """
name: rows
graders:
  - kind: equality
  - {kind: contains, values: [a], advisory: true}
cases:
  - {name: one, output: "a", expected: "a"}
  - name: two
    turns:
      - {output: "b", expected: "a"}
      - {output: "a", expected: "a"}
"""


def test_records_are_the_same_from_every_form_of_a_run(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(SUITE))
    report = gradekit.run_suite(gradekit.load_suite(tmp_path / "suite.yaml"))
    gradekit.report.write_json(report, tmp_path / "r.json")
    with gradekit.report.CaseLog(tmp_path / "r.jsonl") as log:
        for case in report.cases:
            log.append(case)
    rows = list(gradekit.report.to_records(report))
    assert len(rows) == 6  # 3 turns x 2 graders
    assert rows[2] == {
        "case": "two",
        "attempt": None,
        "case_outcome": "fail",
        "turn": 0,
        "grader": "equality",
        "kind": "equality",
        "passed": False,
        "score": 0.0,
        "outcome": "fail",
        "error": None,
        "message": rows[2]["message"],
        "advisory": False,
        "weight": 1.0,
        "duration_ms": rows[2]["duration_ms"],
    }
    for path in ("r.json", "r.jsonl"):
        assert list(gradekit.report.to_records(tmp_path / path)) == rows


def test_to_frame_gives_a_dataframe_with_a_row_per_result(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(SUITE))
    report = gradekit.run_suite(gradekit.load_suite(tmp_path / "suite.yaml"))
    frame = gradekit.report.to_frame(report)
    assert len(frame) == 6
    assert frame.groupby("grader")["passed"].sum().to_dict() == {"contains": 2, "equality": 2}
