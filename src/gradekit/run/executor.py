"""Where a run grades: in this process (the default) or elsewhere, through a `Remote` executor.

`run_suite(executor=...)` turns its `executor` into a `Remote` (`dask`: a
`gradekit.DaskExecutor`) or None for `local` (the runner's own loop thread grades). A remote's
`start_run` gives the run's `Execution`, with the same three calls, `start`, `deliver` and
`stop`, as the local one, so `on_case`, counting, selection and resume work the same whichever
grades. This module names no executor: the runner picks one.

Small because it is the seam both sides import: the runner and `run/dask` meet here without
importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NamedTuple, Protocol, Union

from gradekit.report.json import FinishedCase
from gradekit.report.summary import SummaryBuilder
from gradekit.run.settings import Settings
from gradekit.suite.dataset import FileCases
from gradekit.suite.model import Suite

__all__ = ["Execution", "Executor", "Receive", "Remote", "Routed"]

Executor = Union[Literal["local", "dask"], "Remote"]
"""What `run_suite(executor=...)` takes: `local`, `dask`, or a `Remote` (a `DaskExecutor`)."""

Receive = Callable[[Sequence[tuple[int, FinishedCase]], SummaryBuilder | None], None]
"""`receive(items, counted)`: finished cases as (position, report), and their summary when
whoever graded them counted them already (else None)."""


class Routed(NamedTuple):
    """A run whose cases a remote may build where it grades them: `cases`, the suite file's
    cases (the run grades every one of them, none selected or resumed); `note_kinds`, called
    with the grader kinds of the cases built elsewhere (for the report's environment); and
    `reserve`, called with the number of cases about to be sent, in order, before they are
    (a results log makes room for them)."""

    cases: FileCases
    note_kinds: Callable[[Iterable[str]], object]
    reserve: Callable[[int], object]


class Execution(Protocol):
    """One run in progress, as the runner drives it."""

    def start(self) -> None:
        """Begin grading (in other threads)."""

    def deliver(self, receive: Receive, deadline: float = 0.0) -> None:
        """Hand finished cases to `receive` in this thread until the run ends (or the
        `time.monotonic()` deadline passes); raise what ended the run."""

    def stop(self) -> None:
        """Cancel the run; what finished is still delivered."""


class Remote(Protocol):
    """An executor that grades a run's cases elsewhere (`gradekit.DaskExecutor`)."""

    def start_run(
        self,
        suite: Suite,
        settings: Settings,
        jobs: int,
        *,
        keep: bool,
        encode: bool = False,
        routed: Routed | None = None,
    ) -> Execution:
        """The execution of a run of `suite`: `keep`, whether anyone reads the case reports;
        `encode`, whether they go only to a stream or a log, which take their texts alone;
        `routed`, set when the remote may read the suite's cases as the file gives them.
        Connects now (ExecutorError when it cannot), so that nothing is graded when the
        executor cannot be used."""
