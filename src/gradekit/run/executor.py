"""Where a run grades: in this process (the default) or on a Dask cluster.

`run_suite(executor=..., scheduler=...)` asks `remote_run` for the run's execution: None for
`local` (the runner's own loop thread grades), else a Dask run that sends batches of cases to
a cluster (`gradekit.run.dask`). Both give the runner the same three calls, `start`,
`deliver` and `stop`, so `on_case`, counting, selection and resume work the same whichever
grades. `distributed` is imported only when `dask` is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, Protocol, Union

from gradekit.report.jsonl import FinishedCase
from gradekit.report.summary import SummaryBuilder
from gradekit.run.settings import Settings
from gradekit.suite.model import Suite

if TYPE_CHECKING:
    from gradekit.run.dask import DaskExecutor

__all__ = ["Execution", "Executor", "Receive", "remote_run"]

Executor = Union[Literal["local", "dask"], "DaskExecutor"]
"""What `run_suite(executor=...)` takes: `local`, `dask`, or a `DaskExecutor`."""

Receive = Callable[[Sequence[tuple[int, FinishedCase]], SummaryBuilder | None], None]
"""`receive(items, counted)`: finished cases as (position, report), and their summary when
whoever graded them counted them already (else None)."""


class Execution(Protocol):
    """One run in progress, as the runner drives it."""

    def start(self) -> None:
        """Begin grading (in other threads)."""

    def deliver(self, receive: Receive, deadline: float = 0.0) -> None:
        """Hand finished cases to `receive` in this thread until the run ends (or the
        `time.monotonic()` deadline passes); raise what ended the run."""

    def stop(self) -> None:
        """Cancel the run; what finished is still delivered."""


def remote_run(
    executor: Executor | None,
    scheduler: str | None,
    suite: Suite,
    settings: Settings,
    jobs: int,
    *,
    keep: bool,
    encode: bool = False,
) -> Execution | None:
    """The execution of a run that grades elsewhere, or None to grade in this process.
    `keep`: whether anyone reads the case reports; `encode`: whether they go only to a
    stream or a log, which take their texts alone.

    Connects to the cluster now (raises ExecutorError when it cannot), so that nothing is
    graded when the cluster cannot be used.
    """
    if executor is None or executor == "local":
        if scheduler is not None:
            raise ValueError(
                f"scheduler={scheduler!r} needs executor='dask'; the local executor has none"
            )
        return None
    from gradekit.run.dask import DaskExecutor

    if executor == "dask":
        executor = DaskExecutor(scheduler)
    elif not isinstance(executor, DaskExecutor):
        raise ValueError(
            f"executor must be 'local', 'dask' or a gradekit.DaskExecutor, got {executor!r}"
        )
    elif scheduler is not None:
        raise ValueError("give the scheduler to DaskExecutor(scheduler) or as scheduler=, not both")
    return executor.start_run(suite, settings, jobs, keep=keep, encode=encode)
