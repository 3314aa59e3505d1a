"""What comparing two runs reads of each case: its outcome, and each grader's score on each
turn (results that did not error).

Read from a file straight from the cases' JSON forms, one at a time (`CaseForms`): no case
report is built and neither file is held whole, so two runs of a million cases compare in
memory for their scores alone. From report objects, the same is read from the objects.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from gradekit._errors import ConfigError
from gradekit.report.environment import Environment
from gradekit.report.model import CaseReport, Outcome, SuiteReport
from gradekit.report.reading import CaseForms, CaseKey, Run, key_of_data, outcome_of_data

__all__ = ["Scores", "Seen", "read_seen", "scores_of_case", "scores_of_data"]

Scores = dict[tuple[int, str], float]
"""A case's scores by (turn index, grader name), of the results that did not error."""


class Seen(NamedTuple):
    """What a comparison reads of one case."""

    outcome: Outcome
    scores: Scores


def read_seen(run: Run) -> tuple[dict[CaseKey, Seen], Environment | None]:
    """What a comparison reads of each case of `run` (a file, a `SuiteReport` or case
    reports), by name and attempt, in the run's order, and the run's environment (None when
    it records none). A case held twice (a resumed log) counts as its last copy."""
    seen: dict[CaseKey, Seen] = {}
    if isinstance(run, (str, os.PathLike)):
        forms = CaseForms(run)
        for data in forms:
            try:
                seen[key_of_data(data)] = Seen(outcome_of_data(data), scores_of_data(data))
            except (KeyError, TypeError, AttributeError, ValueError) as error:
                raise ConfigError(
                    f"{forms.path} is not a gradekit report: a case lacks or garbles {error}; "
                    "give a JSON report (gradekit run -o) or a results log (--resume)"
                ) from None
        environment = forms.head.get("environment")
        return seen, Environment.from_dict(environment) if isinstance(
            environment, Mapping
        ) else None
    cases: Iterable[CaseReport] = run.cases if isinstance(run, SuiteReport) else run
    for case in cases:
        seen[(case.name, case.attempt)] = Seen(case.outcome, scores_of_case(case))  # type: ignore[arg-type]
    return seen, run.environment if isinstance(run, SuiteReport) else None


def scores_of_case(case: CaseReport) -> Scores:
    """A case report's scores (see `Scores`)."""
    return {
        (turn.index, record.result.name): record.result.score
        for turn in case.turns
        for record in turn.results
        if record.result.error is None
    }


def scores_of_data(data: Mapping[str, Any]) -> Scores:
    """The scores of a case's JSON form, as `scores_of_case` reads them of its report."""
    return {
        (int(turn["index"]), str(result["name"])): float(result["score"])
        for turn in data["turns"]
        for result in turn["results"]
        if result.get("error") is None
    }
