"""Reading a finished run back: from a JSON report, a `--resume` log, or report objects."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from gradekit._errors import ConfigError
from gradekit.report.model import CaseReport, SuiteReport

__all__ = ["Run", "read_run"]


Run = SuiteReport | Iterable[CaseReport] | str | os.PathLike[str]


def read_run(run: Run) -> list[CaseReport]:
    """The case reports of a run: a `SuiteReport`, case reports, or the path of a JSON report
    or a `--resume` log (JSONL); a file that is neither is a ConfigError naming it."""
    if isinstance(run, SuiteReport):
        return list(run.cases)
    if not isinstance(run, (str, os.PathLike)):
        return list(run)
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
    if isinstance(data, Mapping) and isinstance(data.get("cases"), list):
        items = data["cases"]
    else:
        from gradekit.report.jsonl import read_cases

        return [case for _, case in read_cases(path)]
    try:
        return [CaseReport.from_dict(item) for item in items]
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(
            f"{path} is not a gradekit report: a case lacks {error}; give a JSON report "
            "(gradekit run -o) or a results log (--resume)"
        ) from None
