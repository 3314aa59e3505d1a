"""A case as the writers read it: its report, for the verdict rules, and its JSON form, for
what a report carries beside the verdicts (each turn's sample, the case's tags and metadata).

A writer's `cases` may hold `CaseReport`s, their JSON forms (dicts) or the JSON texts of a
results log. Whatever the sample keys the JSON form carries (DESIGN.md: each turn's `input`,
`output`, `expected`, `tool_calls`, `messages`; each case's `tags` and `metadata`), the
writers show; a report without them shows the verdicts alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from gradekit.report.model import CaseReport

__all__ = ["SAMPLE_KEYS", "CaseInput", "CaseView", "case_tags", "turn_samples", "view_of"]

SAMPLE_KEYS = ("input", "output", "expected", "tool_calls", "messages")
"""The keys of a turn's JSON form that hold the sample it graded, in the order shown."""

CaseInput = CaseReport | Mapping[str, Any] | str
"""What a writer accepts as one case: a report, its JSON form, or that form's JSON text."""


class CaseView:
    """One case for a writer: `report` (the verdict rules read it) and `data`, its JSON form
    (built from the report when the case came as one); `text` is the JSON text the case came
    as, if it came as one."""

    __slots__ = ("_data", "report", "text")

    def __init__(
        self, report: CaseReport, data: Mapping[str, Any] | None, text: str | None = None
    ) -> None:
        self.report = report
        self._data = data
        self.text = text

    @property
    def data(self) -> Mapping[str, Any]:
        """The case's JSON form, with whatever sample keys it carries."""
        if self._data is None:
            self._data = self.report.to_dict()
        return self._data


def view_of(item: CaseInput) -> CaseView:
    """The `CaseView` of one of a writer's `cases`."""
    if isinstance(item, CaseReport):
        return CaseView(item, None)
    data: Any = json.loads(item) if isinstance(item, str) else item
    if not isinstance(data, Mapping):
        raise TypeError(
            f"a case must be a CaseReport, its JSON form or its JSON text, not "
            f"{type(item).__name__}"
        )
    return CaseView(CaseReport.from_dict(data), data, item if isinstance(item, str) else None)


def turn_samples(data: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """The sample of each turn of a case's JSON form that carries one: turn index -> the
    sample keys present (in `SAMPLE_KEYS` order)."""
    samples: dict[int, dict[str, Any]] = {}
    turns = data.get("turns")
    if not isinstance(turns, Sequence):
        return samples
    for position, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            continue
        sample = {key: turn[key] for key in SAMPLE_KEYS if turn.get(key) is not None}
        if sample:
            index = turn.get("index")
            samples[index if isinstance(index, int) else position] = sample
    return samples


def case_tags(data: Mapping[str, Any]) -> list[str]:
    """The case's tags (its JSON form's `tags`, the strings among them)."""
    tags = data.get("tags")
    if isinstance(tags, str):
        return [tags]
    if isinstance(tags, Sequence):
        return [tag for tag in tags if isinstance(tag, str)]
    return []
