"""to_records / to_frame: one flat row per result, the same from a report object, a JSON
report and a results log of one real run; the frame's dtypes (whole numbers as `Int64`), its
tags column, and its values against the report's own."""

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
        "tags": (),
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


FULL = """
name: frame
tags: [nightly]
graders:
  - kind: equality
  - {kind: numeric, advisory: true}
cases:
  - {name: one, output: "a", expected: "a", tags: [smoke, math]}
  - {name: tries, expected: "4", attempts: ["4", "5", "4"]}
  - name: two
    turns:
      - {output: "b", expected: "a"}
      - {output: "a", expected: "a"}
dataset: more.jsonl
"""


@pytest.fixture
def full_run(tmp_path: Path) -> gradekit.report.SuiteReport:
    """A real run of every kind of row: tags, attempts, turns, an erroring grader and a
    dataset line that is not JSON (a case that could not be loaded); written as a JSON
    report (r.json) and a results log (r.jsonl) beside it."""
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(FULL))
    (tmp_path / "more.jsonl").write_text('{"name": "ok", "output": "x", "expected": "x"}\n{oops\n')
    report = gradekit.run_suite(gradekit.load_suite(tmp_path / "suite.yaml"))
    gradekit.report.write_json(report, tmp_path / "r.json")
    with gradekit.report.CaseLog(tmp_path / "r.jsonl") as log:
        for case in report.cases:
            log.append(case)
    return report


def test_the_frame_has_whole_numbers_as_nullable_integers_and_tags_as_tuples(
    full_run: gradekit.report.SuiteReport,
) -> None:
    pandas = pytest.importorskip("pandas")
    frame = gradekit.report.to_frame(full_run)
    assert list(frame.columns) == list(gradekit.report.reading.COLUMNS)
    assert str(frame["attempt"].dtype) == "Int64"
    assert str(frame["turn"].dtype) == "Int64"
    assert frame["passed"].dtype == bool and frame["advisory"].dtype == bool
    for column in ("score", "weight", "duration_ms"):
        assert frame[column].dtype == "float64"
    tries = frame[frame["case"] == "tries"]
    assert tries["attempt"].tolist() == [0, 0, 1, 1, 2, 2]
    assert frame[frame["case"] == "one"]["attempt"].isna().all()
    assert frame[frame["case"] == "two"]["turn"].tolist() == [0, 0, 1, 1]
    # the case that could not be loaded: no turn (NA, not NaN), its error
    broken = frame[frame["grader"].isna()]
    assert len(broken) == 1 and broken["turn"].isna().all()
    assert broken["outcome"].tolist() == ["error"]
    assert "more.jsonl:2" in broken["error"].iloc[0]
    # tags: a tuple per row, the suite's then the case's own: list-like (explode, `in`,
    # str.join) and hashable (value_counts, groupby)
    assert frame[frame["case"] == "one"]["tags"].tolist() == [("nightly", "smoke", "math")] * 2
    assert frame["tags"].value_counts().to_dict() == {
        ("nightly",): 12,
        ("nightly", "smoke", "math"): 2,
        (): 1,  # the dataset line that is not JSON: no case, no tags
    }
    assert frame["tags"].str.join(",").iloc[0] == "nightly,smoke,math"
    assert frame["tags"].map(lambda tags: "smoke" in tags).sum() == 2
    exploded = frame.explode("tags")
    assert sorted(exploded[exploded["case"] == "one"]["tags"].unique()) == [
        "math",
        "nightly",
        "smoke",
    ]
    assert frame.groupby("grader")["passed"].sum().to_dict() == {"equality": 5, "numeric": 2}
    assert isinstance(frame, pandas.DataFrame)


def test_the_frame_holds_the_report_s_values(full_run: gradekit.report.SuiteReport) -> None:
    pytest.importorskip("pandas")
    frame = gradekit.report.to_frame(full_run)
    expected = [
        (
            case.name,
            case.attempt,
            case.outcome,
            case.tags,
            turn.index,
            record.result.name,
            record.result.outcome,
            record.result.error,
            record.result.score,
            record.weight,
            record.duration_ms,
        )
        for case in full_run.cases
        for turn in case.turns
        for record in turn.results
    ]
    columns = ["case", "attempt", "case_outcome", "tags", "turn", "grader", "outcome", "error"]
    columns += ["score", "weight", "duration_ms"]
    graded = frame[frame["grader"].notna()]
    got = [
        tuple(None if _missing(value) else value for value in row)
        for row in graded[columns].itertuples(index=False)
    ]
    assert got == expected
    assert any(error is not None for *_, error, _, _, _ in expected)  # the numeric grader on words


def _missing(value: object) -> bool:
    """pandas' missing value (NA, NaN or None) in a cell that is not a tuple (tags)."""
    import pandas

    return not isinstance(value, tuple) and bool(pandas.isna(value))


def test_the_frame_of_a_report_read_back_is_the_frame_of_the_run(
    full_run: gradekit.report.SuiteReport, tmp_path: Path
) -> None:
    pandas = pytest.importorskip("pandas")
    frame = gradekit.report.to_frame(full_run)
    for path in ("r.json", "r.jsonl"):
        read_back = gradekit.report.to_frame(tmp_path / path)
        pandas.testing.assert_frame_equal(read_back, frame)
    assert gradekit.report.to_frame(full_run.cases).equals(frame)


def test_the_frame_of_no_cases_has_the_columns_and_dtypes() -> None:
    pytest.importorskip("pandas")
    frame = gradekit.report.to_frame([])
    assert list(frame.columns) == list(gradekit.report.reading.COLUMNS)
    assert len(frame) == 0 and str(frame["turn"].dtype) == "Int64"


def test_a_report_lacking_a_key_is_an_error_naming_it(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    path = tmp_path / "r.json"
    path.write_text('{"suite": "s", "cases": [{"name": "a", "passed": true, "turns": [{}]}]}')
    with pytest.raises(gradekit.ConfigError, match=r"r\.json is not a gradekit report.*index"):
        gradekit.report.to_frame(path)
