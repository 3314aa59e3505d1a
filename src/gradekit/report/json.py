"""The JSON report of DESIGN.md, streamed case by case and written atomically."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

import attrs

from gradekit.report._atomic import atomic_text
from gradekit.report.jsonl import case_json
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["write_json"]


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
    # Serialise the header without the cases (they may be many): same summary, no cases.
    header = attrs.evolve(report, cases=(), stored_summary=report.summary).to_dict()
    header.pop("cases")
    with atomic_text(path) as out:
        # The header's closing brace is replaced by the streamed `cases` array.
        out.write(json.dumps(header, ensure_ascii=False)[:-1])
        out.write(', "cases": [')
        first = True
        marks = report.baseline  # each case with its mark against the baseline, if any
        for case in report.cases if cases is None else cases:
            out.write("\n  " if first else ",\n  ")
            text = case if isinstance(case, str) else case_json(case)
            out.write(text if marks is None else marks.mark_text(text))
            first = False
        out.write("\n]}\n")
