"""One grader name's counts while a run's summary accumulates (see `SummaryBuilder`)."""

from __future__ import annotations

__all__ = ["GraderCounts"]


class GraderCounts:
    """One grader name's counts while a summary accumulates (see `SummaryBuilder.counters`)."""

    __slots__ = ("errored", "failed", "passed", "score_squares", "score_sum")

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.errored = 0
        self.score_sum = 0.0
        """The sum of the scores of the results that are not errored."""
        self.score_squares = 0.0
        """The sum of their squares (for the interval of their mean)."""
