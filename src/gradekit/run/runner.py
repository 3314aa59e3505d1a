"""The runner: `run_suite` grades a suite's cases concurrently, and `arun_suite` awaits it
from an event loop (`gradekit.grade`, one sample through some graders, is
`gradekit.run.dispatch`'s).

The event loop runs in a daemon thread of its own (see `gradekit.run.loop`); the thread that
called `run_suite` receives each finished case from a queue, records it, calls `on_case` with
it and counts it (see `gradekit.run.collect`). So `on_case` always runs in the caller's thread,
Ctrl-C (KeyboardInterrupt, delivered to the main thread) stops the run cleanly wherever the
graders are, and a grader that hangs holds neither the caller nor the exit of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

import attrs

from gradekit.core.context import RunContext, current_run
from gradekit.core.errors import WriteError
from gradekit.history.baseline import Baseline
from gradekit.report.attempts import DEFAULT_CONFIDENCE
from gradekit.report.model import CaseReport, SuiteReport
from gradekit.run.collect import Collection
from gradekit.run.executor import Executor, Remote
from gradekit.run.exits import detach_stdin, refusing_exits, stopping_on
from gradekit.run.loop import CANCEL
from gradekit.run.resume import ResultsLog
from gradekit.run.settings import (
    GraderDefaults,
    Outputs,
    Settings,
    Statistics,
    default_jobs,
)
from gradekit.run.stream import CaseStream
from gradekit.suite.model import Suite
from gradekit.suite.selection import Select, as_selection

__all__ = ["arun_suite", "run_suite"]


def run_suite(
    suite: Suite,
    *,
    jobs: int | None = None,
    on_case: Callable[[CaseReport], object] | None = None,
    select: Select | None = None,
    resume: str | os.PathLike[str] | ResultsLog | None = None,
    executor: Executor = "local",
    defaults: GraderDefaults | None = None,
    outputs: Outputs | None = None,
    statistics: Statistics | None = None,
) -> SuiteReport:
    """Grade every case of `suite` (or the selected ones) and return the report.

    `jobs`: cases graded at once (default `default_jobs()`: CPU count + 4, at most 32).
    `on_case(report)`: called in this thread as each case it grades finishes (in finishing
    order). `select`: grade only some cases: a `Selection`, a function of a `Case`, a name glob
    or several. A selection that matches no case raises SelectionError (nothing was graded).

    `resume`: a results log (a path, or a `ResultsLog` the caller keeps open to stream the
    cases from afterwards): the cases already in it are not graded again but are in the
    report, and each case graded is appended as it ends. If the log cannot be written (a full
    disk), the run stops and WriteError is raised; its `report` holds every case in the log.

    `executor="dask"` grades on a Dask cluster (the one `$GRADEKIT_DASK_SCHEDULER` names, else
    a local one), or give a `gradekit.DaskExecutor` (docs/dask.md); reports, the results log
    and `on_case` stay in this process.

    `defaults` (a `GraderDefaults`): timeout, isolation, memory limit and sandbox of the
    entries that set none. `outputs` (an `Outputs`): which cases `report.cases` keeps, whether
    they carry their samples (cut at `max_text` bytes), and a stream that writes them as they
    end. `statistics` (a `Statistics`): the baseline run to compare with, the k of pass@k and
    the level of the intervals.

    The report's cases are in the suite's order. Ctrl-C stops the run: the report then holds
    the cases that finished and has `complete=False`. While the run grades, `os._exit` in
    this process raises ExitRefusedError in its caller (a grader's error result) instead of
    ending the process (docs/runner.md, "Failure isolation").
    """
    jobs = default_jobs() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
    defaults = GraderDefaults() if defaults is None else defaults
    outputs = Outputs() if outputs is None else outputs
    statistics = Statistics() if statistics is None else statistics
    if resume is not None and outputs.stream is not None:
        raise ValueError(
            "give a results log (resume=) or a stream (Outputs(stream=)), not both: the stream "
            "writes the cases of a run without a log"
        )
    confidence = statistics.confidence
    selection = as_selection(select)
    _check_sandbox(defaults.sandbox)
    base = None if statistics.baseline is None else Baseline.load(statistics.baseline)
    folder = os.path.dirname(os.path.abspath(suite.path)) if suite.path else None
    settings = Settings(
        timeout=suite.timeout if defaults.timeout is None else defaults.timeout,
        isolation=defaults.isolation,
        memory_limit_mb=defaults.memory_limit_mb,
        suite_dir=folder,
        sandbox=suite.sandbox if defaults.sandbox is None else defaults.sandbox,
        max_text=outputs.max_text if outputs.samples else None,
    )
    with contextlib.ExitStack() as stack:
        log: ResultsLog | CaseStream | None = outputs.stream
        if isinstance(resume, ResultsLog):
            log = resume
        elif resume is not None:
            log = stack.enter_context(ResultsLog(resume))
        stack.enter_context(stopping_on(signal.SIGINT, only_if_default=True))
        stack.callback(detach_stdin())  # graders never read gradekit's stdin; restored after
        stack.enter_context(refusing_exits())  # a grader's os._exit is its error result
        tally = None if base is None or isinstance(log, ResultsLog) else base.tally()
        if isinstance(log, CaseStream):
            log.tally = tally  # each case counted, and streamed into the JSON report marked
        # Without a log to read the cases back from, the collector counts them as they end.
        counting = tally if log is None else None
        collection = Collection(
            suite,
            settings,
            jobs,
            on_case,
            outputs.keep_cases,
            selection,
            log,
            statistics.k,
            tally=counting,
            rescue=outputs.rescue,
        )
        # A run context of its own (what its grades share), with the options in effect.
        run = stack.enter_context(RunContext(current_run().options))
        try:
            report = _with_figures(collection.run(_remote(executor)), run)
            if confidence != DEFAULT_CONFIDENCE:
                report = attrs.evolve(report, stored_summary=report.summary.at_level(confidence))
        except WriteError as error:
            if error.report is not None:
                error.report = _with_figures(error.report, run)
            if base is not None and error.report is not None:
                marks = base.tally().add_all(error.report.cases).marks(confidence)
                error.report = attrs.evolve(error.report, baseline=marks)
            raise
        if base is None:
            return report
        if tally is None:
            assert isinstance(log, ResultsLog)
            tally = base.tally().add_texts(log.case_texts())
        return attrs.evolve(report, baseline=tally.marks(confidence))


async def arun_suite(
    suite: Suite,
    *,
    jobs: int | None = None,
    on_case: Callable[[CaseReport], object] | None = None,
    select: Select | None = None,
    resume: str | os.PathLike[str] | ResultsLog | None = None,
    executor: Executor = "local",
    defaults: GraderDefaults | None = None,
    outputs: Outputs | None = None,
    statistics: Statistics | None = None,
) -> SuiteReport:
    """`run_suite` awaited from a running event loop, which it never
    blocks: the run's caller's side (receiving cases, `on_case`, the results log) runs in a
    daemon thread of its own, the grading in the runner's threads as always. The same
    arguments (checked when the run starts), report and errors as `run_suite`; `on_case`
    is called in that thread.

    Cancelling the awaiting task stops the run as Ctrl-C does (a local run; within a quarter
    of a second, and the results log keeps what finished) and raises CancelledError.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[SuiteReport] = loop.create_future()
    cancel = threading.Event()

    def settle(ok: bool, value: Any) -> None:
        if done.done():  # cancelled meanwhile
            return
        if ok:
            done.set_result(value)
        else:
            done.set_exception(value)

    def target() -> None:
        CANCEL.set(cancel)
        try:
            report = run_suite(
                suite,
                jobs=jobs,
                on_case=on_case,
                select=select,
                resume=resume,
                executor=executor,
                defaults=defaults,
                outputs=outputs,
                statistics=statistics,
            )
        except BaseException as error:  # handed to the awaiting task
            outcome: tuple[bool, Any] = (False, error)
        else:
            outcome = (True, report)
        with contextlib.suppress(RuntimeError):  # the loop has closed
            loop.call_soon_threadsafe(settle, *outcome)

    context = contextvars.copy_context()  # the caller's run options among them
    thread = threading.Thread(target=context.run, args=(target,), name="gradekit-arun", daemon=True)
    thread.start()
    try:
        return await done
    except asyncio.CancelledError:
        cancel.set()
        raise


def _with_figures(report: SuiteReport, run: RunContext) -> SuiteReport:
    """The report with what the run's judge calls cost in its summary (`summary.judge`),
    when a judge ran."""
    judge = run.figures().get("judge")
    if judge is None:
        return report
    return attrs.evolve(report, stored_summary=attrs.evolve(report.summary, judge=judge))


def _remote(executor: Executor | None) -> Remote | None:
    """The executor of `run_suite(executor=...)`: None to grade here."""
    if executor is None or executor == "local":  # None: what older callers gave
        return None
    from gradekit.run.dask import DaskExecutor

    if executor == "dask":
        return DaskExecutor()
    if not isinstance(executor, DaskExecutor):
        raise ValueError(
            f"executor must be 'local', 'dask' or a gradekit.DaskExecutor, got {executor!r}"
        )
    return executor


def _check_sandbox(sandbox: str | None) -> None:
    if sandbox is None:
        return  # nothing asked: the process modules stay unimported
    from gradekit.core.errors import SandboxError
    from gradekit.process.bubblewrap import requested_problem

    problem = requested_problem(sandbox)
    if problem is not None:
        raise SandboxError(problem)
