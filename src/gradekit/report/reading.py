"""Reading a finished run back: from a JSON report, a `--resume` log, or report objects."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from gradekit._errors import ConfigError
from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["Run", "read_report", "read_run"]


Run = SuiteReport | Iterable[CaseReport] | str | os.PathLike[str]


def read_run(run: Run) -> list[CaseReport]:
    """The case reports of a run: a `SuiteReport`, case reports, or the path of a JSON report
    or a `--resume` log (JSONL); a file that is neither is a ConfigError naming it."""
    return list(read_report(run).cases)


def read_report(run: Run) -> SuiteReport:
    """A run as a `SuiteReport` (see `read_run` for what `run` may be). From a JSON report:
    its suite name, completeness, duration, `environment` (None in a report of an older
    gradekit) and cases, the summary counted again from the cases. From a results log or
    case reports: the cases alone (the log's file name as the suite's name, no environment)."""
    if isinstance(run, SuiteReport):
        return run
    if not isinstance(run, (str, os.PathLike)):
        return SuiteReport(suite="", cases=tuple(run))
    path = Path(run)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(
            f"cannot read {path}: {error.strerror or error}; check the path"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if not (isinstance(data, Mapping) and isinstance(data.get("cases"), list)):
        from gradekit.report.jsonl import read_cases

        return SuiteReport(suite=path.stem, cases=tuple(case for _, case in read_cases(path)))
    try:
        cases = tuple(CaseReport.from_dict(item) for item in data["cases"])
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(
            f"{path} is not a gradekit report: a case lacks {error}; give a JSON report "
            "(gradekit run -o) or a results log (--resume)"
        ) from None
    environment = data.get("environment")
    return SuiteReport(
        suite=str(data.get("suite", path.stem)),
        cases=cases,
        complete=bool(data.get("complete", True)),
        duration_ms=float(data.get("duration_ms", 0.0)),
        environment=Environment.from_dict(environment)
        if isinstance(environment, Mapping)
        else None,
    )
