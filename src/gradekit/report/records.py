"""One flat record per result, for pandas and friends: `to_records` and `to_frame`.

Each record is a plain dict: the case (`case`, `attempt`: its attempt index, None for a case of
one attempt, `case_outcome`), the turn (`turn`), the result
(`grader`, `kind`, `passed`, `score`, `outcome`, `error`, `message`, `advisory`, `weight`,
`duration_ms`). A case that could not be loaded gives one record with `grader` None and its
error. pandas is imported by `to_frame` only (`pip install pandas`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gradekit.report.reading import Run, read_run

if TYPE_CHECKING:
    import pandas

__all__ = ["to_frame", "to_records"]


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
        from gradekit._errors import GradekitError

        raise GradekitError(
            "to_frame needs pandas, which is not installed; pip install 'gradekit[pandas]'"
        ) from None
    return pandas.DataFrame.from_records(list(to_records(run)))
