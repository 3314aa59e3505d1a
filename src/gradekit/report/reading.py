"""Reading a finished run back into the report model: from a JSON report (streamed a case at a
time: `report_stream`), a `--resume` log (`jsonl`), or report objects (`read_report`,
`read_run`); and as flat records (`to_records`, `to_frame`).

`to_records`: one flat record per result, for pandas and friends. Each record is a plain
dict: the case (`case`, `attempt`: its attempt index, None for a case of one attempt,
`case_outcome`), the turn (`turn`), the result (`grader`, `kind`, `passed`, `score`,
`outcome`, `error`, `message`, `advisory`, `weight`, `duration_ms`). A case
that could not be loaded gives one record with `grader` None and its error. pandas is
imported by `to_frame` only (`pip install pandas`).

The comparisons of runs (`gradekit.history`) read runs' files through this module and
`jsonl`; nothing here compares."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gradekit.core.errors import ConfigError, GradekitError
from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, SuiteReport
from gradekit.report.report_stream import open_report

if TYPE_CHECKING:
    import pandas

__all__ = [
    "Run",
    "environment_of",
    "not_a_report",
    "read_report",
    "read_run",
    "to_frame",
    "to_records",
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
    with open_report(path) as report:
        if report is None:
            from gradekit.report.json import read_cases

            return SuiteReport(suite=path.stem, cases=tuple(case for _, case in read_cases(path)))
        cases = tuple(_case_report(item, path) for item in report.cases())
        head = report.head
    return SuiteReport(
        suite=str(head.get("suite", path.stem)),
        cases=cases,
        complete=bool(head.get("complete", True)),
        duration_ms=float(head.get("duration_ms", 0.0)),
        environment=environment_of(head),
    )


def environment_of(head: Mapping[str, Any]) -> Environment | None:
    """The `environment` of a JSON report's top-level keys (None in a report of an older
    gradekit, and for a log)."""
    environment = head.get("environment")
    return Environment.from_dict(environment) if isinstance(environment, Mapping) else None


def _case_report(data: Any, path: Path) -> CaseReport:
    try:
        return CaseReport.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise not_a_report(path, error) from None


def not_a_report(path: Path, error: Exception) -> ConfigError:
    """The error of a run's file holding a case that lacks a key or garbles a value."""
    return ConfigError(
        f"{path} is not a gradekit report: a case lacks or garbles {error}; give a JSON "
        "report (gradekit run -o) or a results log (--resume)"
    )


def to_records(run: Run) -> Iterator[dict[str, Any]]:
    """Yield one flat dict per result of `run`: a JSON report, a `--resume` log (paths), a
    `SuiteReport` or case reports."""
    for case in read_run(run):
        base = {"case": case.name, "attempt": case.attempt, "case_outcome": case.outcome}
        if case.error is not None and not case.turns:
            yield {
                **base,
                "turn": None,
                "grader": None,
                "kind": None,
                "passed": False,
                "score": 0.0,
                "outcome": "error",
                "error": case.error,
                "message": case.error,
                "advisory": False,
                "weight": 0.0,
                "duration_ms": case.duration_ms,
            }
            continue
        for turn in case.turns:
            for record in turn.results:
                result = record.result
                yield {
                    **base,
                    "turn": turn.index,
                    "grader": result.name,
                    "kind": result.kind,
                    "passed": result.passed,
                    "score": result.score,
                    "outcome": result.outcome,
                    "error": result.error,
                    "message": result.message,
                    "advisory": record.advisory,
                    "weight": record.weight,
                    "duration_ms": result.duration_ms,
                }


def to_frame(run: Run) -> pandas.DataFrame:
    """`to_records(run)` as a pandas DataFrame, one row per result."""
    try:
        import pandas
    except ImportError:  # pragma: no cover - depends on the environment
        raise GradekitError(
            "to_frame needs pandas, which is not installed; pip install 'gradekit[pandas]'"
        ) from None
    return pandas.DataFrame.from_records(list(to_records(run)))
