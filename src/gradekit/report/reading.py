"""Reading a finished run back: from a JSON report, a `--resume` log, or report objects."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from gradekit._errors import ConfigError
from gradekit.report.model import CaseReport, Outcome, SuiteReport, outcome_of

__all__ = ["Run", "outcome_of_data", "read_outcomes", "read_run"]


Run = SuiteReport | Iterable[CaseReport] | str | os.PathLike[str]


def read_run(run: Run) -> list[CaseReport]:
    """The case reports of a run: a `SuiteReport`, case reports, or the path of a JSON report
    or a `--resume` log (JSONL); a file that is neither is a ConfigError naming it."""
    if isinstance(run, SuiteReport):
        return list(run.cases)
    if not isinstance(run, (str, os.PathLike)):
        return list(run)
    path = Path(run)
    items = _report_items(path)
    if items is None:
        from gradekit.report.jsonl import read_cases

        return [case for _, case in read_cases(path)]
    try:
        return [CaseReport.from_dict(item) for item in items]
    except (KeyError, TypeError, ValueError) as error:
        raise _not_a_report(path, error) from None


def read_outcomes(run: Run) -> Iterator[tuple[str, Outcome]]:
    """`(name, outcome)` of each case of a run, in its order: what `read_run` reads, without
    building the case reports of a JSON report (a baseline needs no more)."""
    path = Path(run) if isinstance(run, (str, os.PathLike)) else None
    items = None if path is None else _report_items(path)
    if path is None or items is None:
        for case in read_run(run):
            yield case.name, case.outcome  # type: ignore[misc]
        return
    for item in items:
        try:
            yield str(item["name"]), outcome_of_data(item)
        except (KeyError, TypeError, AttributeError) as error:
            raise _not_a_report(path, error) from None


def outcome_of_data(data: Mapping[str, Any]) -> Outcome:
    """The outcome of a case's JSON form, as `CaseReport.outcome` says it (KeyError without
    `passed`)."""
    errored = bool(data.get("errored")) or data.get("error") is not None
    return outcome_of(bool(data["passed"]), errored)


def _report_items(path: Path) -> list[Any] | None:
    """The `cases` of the JSON report at `path`; None when the file is not one (a log)."""
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
        return list(data["cases"])
    return None


def _not_a_report(path: Path, error: Exception) -> ConfigError:
    return ConfigError(
        f"{path} is not a gradekit report: a case lacks {error}; give a JSON report "
        "(gradekit run -o) or a results log (--resume)"
    )
