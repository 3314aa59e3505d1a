"""Reading a finished run back: from a JSON report, a `--resume` log, or report objects."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from gradekit._errors import ConfigError
from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, Outcome, SuiteReport, outcome_of

__all__ = [
    "CaseKey",
    "Run",
    "key_of_data",
    "outcome_of_data",
    "read_outcomes",
    "read_report",
    "read_run",
]


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
    data = _report_data(path)
    if data is None:
        from gradekit.report.jsonl import read_cases

        return SuiteReport(suite=path.stem, cases=tuple(case for _, case in read_cases(path)))
    try:
        cases = tuple(CaseReport.from_dict(item) for item in data["cases"])
    except (KeyError, TypeError, ValueError) as error:
        raise _not_a_report(path, error) from None
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


CaseKey = tuple[str, int | None]
"""What tells a run's cases apart: the name, and the attempt index of one of several attempts."""


def read_outcomes(run: Run) -> Iterator[tuple[CaseKey, Outcome]]:
    """`((name, attempt), outcome)` of each case of a run, in its order: what `read_run`
    reads, without building the case reports of a JSON report (a baseline needs no more)."""
    path = Path(run) if isinstance(run, (str, os.PathLike)) else None
    data = None if path is None else _report_data(path)
    if path is None or data is None:
        for case in read_run(run):
            yield (case.name, case.attempt), case.outcome  # type: ignore[misc]
        return
    for item in data["cases"]:
        try:
            yield key_of_data(item), outcome_of_data(item)
        except (KeyError, TypeError, AttributeError) as error:
            raise _not_a_report(path, error) from None


def key_of_data(data: Mapping[str, Any]) -> CaseKey:
    """The `(name, attempt)` of a case's JSON form (KeyError without `name`)."""
    attempt = data.get("attempt")
    return str(data["name"]), attempt if isinstance(attempt, int) else None


def outcome_of_data(data: Mapping[str, Any]) -> Outcome:
    """The outcome of a case's JSON form, as `CaseReport.outcome` says it (KeyError without
    `passed`)."""
    errored = bool(data.get("errored")) or data.get("error") is not None
    return outcome_of(bool(data["passed"]), errored)


def _report_data(path: Path) -> Mapping[str, Any] | None:
    """The JSON report at `path` (with a `cases` list); None when the file is not one (a
    results log)."""
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
    if isinstance(data, Mapping) and isinstance(data.get("cases"), list):
        return data
    return None


def _not_a_report(path: Path, error: Exception) -> ConfigError:
    return ConfigError(
        f"{path} is not a gradekit report: a case lacks {error}; give a JSON report "
        "(gradekit run -o) or a results log (--resume)"
    )
