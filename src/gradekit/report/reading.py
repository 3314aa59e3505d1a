"""Reading a finished run back: from a JSON report, a `--resume` log, or report objects."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from gradekit._errors import ConfigError
from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, Outcome, SuiteReport, outcome_of
from gradekit.report.report_stream import open_report

__all__ = [
    "CaseForms",
    "CaseKey",
    "ReadWatch",
    "Run",
    "environment_of",
    "key_of_data",
    "not_a_report",
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
    with open_report(path) as report:
        if report is None:
            from gradekit.report.jsonl import read_cases

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


CaseKey = tuple[str, int | None]
"""What tells a run's cases apart: the name, and the attempt index of one of several attempts."""


ReadWatch = Callable[[str], contextlib.AbstractContextManager[Callable[[], None]]]
"""`watch(path)`: the context in which the run's file at `path` is read; it yields a function
called once per case read (`ReportsProgress.reading`)."""


def read_outcomes(run: Run, watch: ReadWatch | None = None) -> Iterator[tuple[CaseKey, Outcome]]:
    """`((name, attempt), outcome)` of each case of a run, in its order: what `read_run`
    reads, without building case reports from a file (a baseline needs no more). `watch`:
    the progress of reading a file."""
    if not isinstance(run, (str, os.PathLike)):
        for case in read_run(run):
            yield (case.name, case.attempt), case.outcome  # type: ignore[misc]
        return
    forms = CaseForms(run, watch)
    for item in forms:
        try:
            yield key_of_data(item), outcome_of_data(item)
        except (KeyError, TypeError, AttributeError) as error:
            raise not_a_report(forms.path, error) from None


class CaseForms:
    """The JSON forms of the cases of a run's file, read one at a time: the items of a JSON
    report (streamed: `report_stream`) or the complete lines of a results log. Iterate once;
    then `head` holds the report's other keys (`environment`, ...; empty for a log).
    `watch`: the progress of the reading.

    For what the readers of outcomes and scores read of a case: a JSON report's cases are
    read `fast` (`report_stream`), where an integer past 64 bits reads as a float."""

    def __init__(self, path: str | os.PathLike[str], watch: ReadWatch | None = None) -> None:
        self.path: Final = Path(path)
        self.head: Mapping[str, Any] = {}
        self._watch = watch

    def __iter__(self) -> Iterator[Any]:
        if self._watch is None:
            yield from self._forms()
            return
        with self._watch(str(self.path)) as tick:
            for form in self._forms():
                tick()
                yield form

    def _forms(self) -> Iterator[Any]:
        from gradekit.report.jsonl import read_case_forms

        with open_report(self.path, fast=True) as report:
            if report is not None:
                yield from report.cases()
                self.head = report.head
                return
        for _, _, data in read_case_forms(self.path):
            yield data


def key_of_data(data: Mapping[str, Any]) -> CaseKey:
    """The `(name, attempt)` of a case's JSON form (KeyError without `name`)."""
    attempt = data.get("attempt")
    return str(data["name"]), attempt if isinstance(attempt, int) else None


def outcome_of_data(data: Mapping[str, Any]) -> Outcome:
    """The outcome of a case's JSON form, as `CaseReport.outcome` says it (KeyError without
    `passed`)."""
    errored = bool(data.get("errored")) or data.get("error") is not None
    return outcome_of(bool(data["passed"]), errored)


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
