"""Whether every turn of a case has graders of one sort, the verdict on the last graders'
tuple remembered: most turns (every case of a dataset, most often) share their graders' tuple
with the turn before, so the test runs about once per suite, not once per turn.

Used on the event loop's thread only (the loop's routing of cases): not thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable

from gradekit.registry.entries import GraderEntry
from gradekit.suite.model import Case

__all__ = ["EveryTurn"]


class EveryTurn:
    """`every_turn(case)`: whether `test(turn.graders)` holds for each turn of `case`."""

    def __init__(self, test: Callable[[tuple[GraderEntry, ...]], bool]) -> None:
        self._test = test
        self._last: tuple[GraderEntry, ...] | None = None
        self._verdict = False

    def __call__(self, case: Case) -> bool:
        """True when every turn's graders pass the test (a case without turns: True)."""
        for turn in case.turns:
            graders = turn.graders
            if graders is not self._last:
                self._last, self._verdict = graders, self._test(graders)
            if not self._verdict:
                return False
        return True
