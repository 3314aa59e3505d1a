"""Reading a finished run back into the report model: from a JSON report (streamed a case at a
time: `report_stream`), a `--resume` log (`jsonl`), or report objects (`read_report`,
`read_run`, `iter_cases`); and as flat records (`to_records`, `to_frame`).

`to_records`: one flat record per result, for pandas and friends. Each record is a plain
dict (keys: `COLUMNS`): the case (`case`, `attempt`: its attempt index, None for a case of
one attempt, `case_outcome`, `tags`: a tuple), the turn (`turn`), the result (`grader`,
`kind`, `passed`, `score`, `outcome`, `error`, `message`, `advisory`, `weight`,
`duration_ms`). A case that could not be loaded gives one record with `grader` None and its
error. A file's cases are flattened from their JSON form as they are read, never all held.

`to_frame`: the same rows as a pandas DataFrame, built a column at a time (NumPy arrays a
chunk of rows at a time, then one `DataFrame` call): `attempt` and `turn` as pandas' nullable
`Int64`. pandas is imported by `to_frame` only (`pip install pandas`).

The comparisons of runs (`gradekit.history`) read runs' files through this module and
`jsonl`; nothing here compares."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from gradekit.core.errors import ConfigError, GradekitError
from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, SuiteReport
from gradekit.report.report_stream import open_report
from gradekit.report.summary import outcome_of

if TYPE_CHECKING:
    import pandas

__all__ = [
    "COLUMNS",
    "Run",
    "environment_of",
    "iter_cases",
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


COLUMNS: Final = (
    "case",
    "attempt",
    "case_outcome",
    "tags",
    "turn",
    "grader",
    "kind",
    "passed",
    "score",
    "outcome",
    "error",
    "message",
    "advisory",
    "weight",
    "duration_ms",
)
"""The keys of `to_records`' dicts and the columns of `to_frame`, in order."""

_WHOLE: Final = ("attempt", "turn")
"""The columns of whole numbers (or None): `Int64` in a frame."""

_DTYPES: Final = {
    "passed": bool,
    "score": float,
    "advisory": bool,
    "weight": float,
    "duration_ms": float,
}
"""The NumPy dtypes of the columns that are not `object` while a frame is built."""

_CHUNK: Final = 8192
"""Rows `to_frame` gathers before it moves them into its columns."""


def iter_cases(run: Run) -> Iterator[CaseReport]:
    """The case reports of `run` one at a time (see `read_run` for what `run` may be): a
    file's read as they are asked for, so only the case in hand is held."""
    if isinstance(run, SuiteReport):
        yield from run.cases
    elif not isinstance(run, (str, os.PathLike)):
        yield from run
    else:
        path = Path(run)
        for form in _forms(path, fast=False):
            yield _case_report(form, path)


def _forms(path: Path, *, fast: bool) -> Iterator[Any]:
    """The JSON form of each case of the JSON report or results log at `path`, in order."""
    with open_report(path, fast=fast) as report:
        if report is not None:
            yield from report.cases()
            return
    from gradekit.report.json import read_case_forms

    yield from (form for _, _, form in read_case_forms(path))


def _rows(run: Run) -> Iterator[tuple[Any, ...]]:
    """One tuple per result of `run`, its values in `COLUMNS` order. A file's cases are
    flattened from their JSON form (read with orjson where installed: no value read here is
    an integer past 64 bits), not made case reports first, which would cost most of the time."""
    if not isinstance(run, (str, os.PathLike)):
        for case in iter_cases(run):
            yield from _case_rows(case)
        return
    path = Path(run)
    for form in _forms(path, fast=True):
        try:
            yield from _form_rows(form)
        except (KeyError, TypeError, AttributeError) as error:
            raise not_a_report(path, error) from None


def _case_rows(case: CaseReport) -> Iterator[tuple[Any, ...]]:
    """The rows of a case report (`_form_rows` reads the same from its JSON form)."""
    head = (case.name, case.attempt, case.outcome)
    if case.error is not None and not case.turns:
        yield _error_row(head, case.tags, case.error, case.duration_ms)
        return
    for turn in case.turns:
        for record in turn.results:
            result = record.result
            yield (
                *head,
                case.tags,
                turn.index,
                result.name,
                result.kind,
                result.passed,
                result.score,
                result.outcome,
                result.error,
                result.message,
                record.advisory,
                record.weight,
                record.duration_ms,
            )


def _form_rows(form: Mapping[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of a case's JSON form, with `CaseReport.from_dict`'s defaults."""
    error, turns, tags = form.get("error"), form.get("turns", ()), tuple(form.get("tags", ()))
    errored = form.get("errored", False) or error is not None
    head = (form["name"], form.get("attempt"), outcome_of(form["passed"], errored))
    if error is not None and not turns:
        yield _error_row(head, tags, error, form.get("duration_ms", 0.0))
        return
    for turn in turns:
        index = turn["index"]
        for result in turn.get("results", ()):
            passed, failure = result["passed"], result.get("error")
            yield (
                *head,
                tags,
                index,
                result["name"],
                result["kind"],
                passed,
                float(result["score"]),
                outcome_of(passed, failure is not None),
                failure,
                result.get("message", ""),
                result.get("advisory", False),
                result.get("weight", 1.0),
                result.get("duration_ms", 0.0),
            )


def _error_row(
    head: tuple[Any, ...], tags: tuple[str, ...], error: str, duration_ms: float
) -> tuple[Any, ...]:
    """The one row of a case that could not be loaded: no turn, no grader, its error."""
    return (
        *head,
        tags,
        None,
        None,
        None,
        False,
        0.0,
        "error",
        error,
        error,
        False,
        0.0,
        duration_ms,
    )


def to_records(run: Run) -> Iterator[dict[str, Any]]:
    """Yield one flat dict per result of `run` (keys: `COLUMNS`): a JSON report, a `--resume`
    log (paths), a `SuiteReport` or case reports."""
    for row in _rows(run):
        yield dict(zip(COLUMNS, row, strict=True))


def to_frame(run: Run) -> pandas.DataFrame:
    """`to_records(run)` as a pandas DataFrame, one row per result, built a column at a time:
    `attempt` and `turn` as nullable integers (`Int64`), `tags` a tuple per row."""
    try:
        import pandas
    except ImportError:  # pragma: no cover - depends on the environment
        raise GradekitError(
            "to_frame needs pandas, which is not installed; pip install 'gradekit[pandas]'"
        ) from None
    import numpy

    chunks: list[list[Any]] = [[] for _ in COLUMNS]
    rows: list[tuple[Any, ...]] = []
    for row in _rows(run):
        rows.append(row)
        if len(rows) == _CHUNK:
            _move(rows, chunks)
    _move(rows, chunks)
    data: dict[str, Any] = {}
    for key, arrays in zip(COLUMNS, chunks, strict=True):
        dtype = _DTYPES.get(key, object)
        data[key] = numpy.concatenate(arrays) if arrays else numpy.empty(0, dtype)
    for key in _WHOLE:
        data[key] = pandas.array(data[key], dtype="Int64")
    return pandas.DataFrame(data, columns=list(COLUMNS))


def _move(rows: list[tuple[Any, ...]], chunks: list[list[Any]]) -> None:
    """Append the values of `rows` to `chunks` as one NumPy array a column, and empty `rows`.
    Arrays, not lists: no Python float or bool a cell, and nothing the garbage collector walks
    again at each collection while the frame is built (bench/frame.py)."""
    import numpy

    count = len(rows)
    for key, arrays, values in zip(COLUMNS, chunks, zip(*rows, strict=True), strict=False):
        arrays.append(numpy.fromiter(values, _DTYPES.get(key, object), count))
    rows.clear()
