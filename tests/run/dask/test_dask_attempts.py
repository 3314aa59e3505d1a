"""Cases of several attempts graded on a real Dask LocalCluster: each attempt keeps its index
on the way to the workers and back, so the report and its pass@k are a local run's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from timings import without_durations

import gradekit
from gradekit import DaskExecutor


def test_a_dask_run_keeps_attempts_and_their_pass_at_k(client: Any, tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text(
        '{"name": "d", "attempt": 0, "output": "x", "expected": "x"}\n'
        '{"name": "d", "attempt": 1, "output": "y", "expected": "x"}\n'
    )
    (tmp_path / "suite.yaml").write_text(
        "name: attempts\ngraders: [{kind: equality}]\ndataset: data.jsonl\ncases:\n"
        "  - {name: add, expected: '4', attempts: ['4', '5', '4']}\n"
    )
    suite = gradekit.load_suite(tmp_path / "suite.yaml")
    local = gradekit.run_suite(suite, statistics=gradekit.Statistics(k=(1, 2)))
    remote = gradekit.run_suite(
        suite, executor=DaskExecutor(client=client), statistics=gradekit.Statistics(k=(1, 2))
    )
    cases = [case.to_dict() for case in remote.cases]
    assert [(case["name"], case.get("attempt")) for case in cases] == [
        ("add", 0),
        ("add", 1),
        ("add", 2),
        ("d", 0),
        ("d", 1),
    ]
    assert without_durations(cases) == without_durations([c.to_dict() for c in local.cases])
    assert remote.summary.pass_at_k == local.summary.pass_at_k
    assert remote.summary.pass_at_k is not None
    assert remote.summary.pass_at_k.to_dict()["mean"]["pass@1"] == pytest.approx(7 / 12)
