"""The JSON report of DESIGN.md, streamed case by case and written atomically.

The keys come in this order: `suite`, `cases`, then what only the end of a run knows
(`passed`, `complete`, `duration_ms`, `summary`, ...), so that a run can write its cases
into the report as they end (`gradekit.run.stream`) and the summary last."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

import attrs

from gradekit.report.files import atomic_text
from gradekit.report.jsonl import case_json
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["json_head", "json_tail", "write_json"]


def json_head(suite: str) -> str:
    """The report's text before its first case."""
    return '{"suite": ' + json.dumps(suite, ensure_ascii=False) + ', "cases": ['


def json_tail(report: SuiteReport) -> str:
    """The report's text after its last case: every key but `suite` and `cases`."""
    header = attrs.evolve(report, cases=(), stored_summary=report.summary).to_dict()
    del header["suite"], header["cases"]
    return "\n], " + json.dumps(header, ensure_ascii=False)[1:] + "\n"


def write_json(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport | str] | None = None,
) -> None:
    """Write `report` as JSON to `path` (temp file in the same folder, fsync, rename).

    `cases` replaces `report.cases` when given: a huge run streams its cases from the JSONL
    log instead of holding them in memory; `report.summary` must then count those cases. An
    item may be the case's JSON text as the log holds it (`case_json`), written as it is.
    """
    with atomic_text(path) as out:
        out.write(json_head(report.suite))
        first = True
        marks = report.baseline  # each case with its mark against the baseline, if any
        for case in report.cases if cases is None else cases:
            out.write("\n  " if first else ",\n  ")
            text = case if isinstance(case, str) else case_json(case)
            out.write(text if marks is None else marks.mark_text(text))
            first = False
        out.write(json_tail(report))
