"""The runner: `run_suite` grades a suite's cases concurrently; `grade` grades one sample.

The event loop runs in a daemon thread of its own (see `gradekit.run.loop`); the thread that
called `run_suite` receives each finished case from a queue, records it, calls `on_case` with
it and counts it (see `gradekit.run.collect`). So `on_case` always runs in the caller's thread,
Ctrl-C (KeyboardInterrupt, delivered to the main thread) stops the run cleanly wherever the
graders are, and a grader that hangs holds neither the caller nor the exit of the process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Iterable, Sequence

import attrs

from gradekit._coroutines import run_sync
from gradekit._errors import WriteError
from gradekit._exits import refusing_exits
from gradekit._load_context import RunContext, current_run
from gradekit._seconds import seconds
from gradekit._types import Grader, GradeResult, Sample
from gradekit.history.baseline import Baseline
from gradekit.registry.entries import GraderEntry, Isolation
from gradekit.report.attempts import checked_ks
from gradekit.report.estimators import DEFAULT_CONFIDENCE, check_confidence
from gradekit.report.model import CaseReport, ResultRecord, SuiteReport
from gradekit.report.reading import Run
from gradekit.run.collect import Collection
from gradekit.run.dispatch import entry_of, run_entry
from gradekit.run.executor import Executor, Remote
from gradekit.run.interrupts import stopping_on
from gradekit.run.resume import ResultsLog
from gradekit.run.selection import Select, as_selection
from gradekit.run.settings import Context, Settings, current_context, default_jobs, set_context
from gradekit.run.stdin import detach_stdin
from gradekit.run.stream import CaseStream
from gradekit.suite.model import Suite

__all__ = ["grade", "run_suite"]


def grade(
    sample: Sample, graders: Iterable[Grader | GraderEntry], *, timeout: float | None = None
) -> tuple[GradeResult, ...]:
    """Grade one sample with every grader, concurrently; results in the graders' order.

    `graders` are graders (from `gradekit.create`) or suite entries. `timeout` (seconds,
    default 60) applies to graders whose entry sets none. Never raises for a grader's fault:
    such a grader gets an error result.
    """
    entries = [entry_of(grader) for grader in graders]
    settings = Settings() if timeout is None else Settings(timeout=seconds(timeout))

    async def main() -> list[ResultRecord]:
        context = Context(settings, current_context().pool)
        set_context(context)
        return await asyncio.gather(*(run_entry(e, sample, context) for e in entries))

    with refusing_exits():  # a grader's os._exit is its error result, not the end of the caller
        records = run_sync(main)
    # Each result with the duration the runner measured, on a copy: the grader's is its own.
    return tuple(attrs.evolve(r.result, duration_ms=r.duration_ms) for r in records)


def run_suite(
    suite: Suite,
    *,
    jobs: int | None = None,
    on_case: Callable[[CaseReport], object] | None = None,
    timeout: float | None = None,
    isolation: Isolation | None = None,
    keep_cases: bool | Callable[[CaseReport], bool] = True,
    memory_limit_mb: int | None = None,
    select: Select | None = None,
    resume: str | os.PathLike[str] | ResultsLog | CaseStream | None = None,
    sandbox: str | None = None,
    executor: Executor = "local",
    scheduler: str | None = None,
    samples: bool = True,
    max_text: int = 4096,
    baseline: Run | Baseline | None = None,
    k: Sequence[int] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> SuiteReport:
    """Grade every case of `suite` (or the selected ones) and return the report.

    `jobs`: cases graded at once (default `default_jobs()`: CPU count + 4, at most 32).
    `on_case(report)`: called in this thread as each case it grades finishes (in finishing
    order). `timeout` / `isolation`: for entries that set none (an entry's own value wins;
    without either, the suite's timeout and thread isolation). `memory_limit_mb`:
    address-space limit of each child process under process isolation. `keep_cases`: which
    cases `report.cases` holds: True every one, False none (the summary is still exact: for
    runs too large to hold), or a function of a case report (`lambda c: c.outcome != "pass"`).

    `select`: grade only some cases: a `Selection`, a function of a `Case`, a name glob or
    several. A selection that matches no case raises SelectionError (nothing was graded).
    `resume`: a results log (a path, or a `ResultsLog` the caller keeps open to stream the
    cases from afterwards): the cases already in it are not graded again but are in the
    report, and each case graded is appended as it ends. If the log cannot be written (a full
    disk), the run stops and WriteError is raised; its `report` holds every case in the log.
    A `CaseStream` instead streams the cases to reports, in suite order, with no log (what
    `gradekit run` does without `--resume`).
    `sandbox` (`auto`, `bwrap`, `none`): for agent code of entries that set none (default: the
    suite's `sandbox:`, else auto); `bwrap` where bubblewrap cannot run raises SandboxError
    before anything is graded.
    `executor="dask"` grades on a Dask cluster, at `scheduler` (default:
    $GRADEKIT_DASK_SCHEDULER, else a local cluster), or give a `gradekit.DaskExecutor`
    (docs/dask.md); reports, the results log and `on_case` stay in this process.
    `samples`: each turn's report carries the sample it graded (input, output, expected, tool
    calls, a transcript's messages) and each case's its metadata, each text cut at `max_text`
    bytes with a marker saying how much was cut; False: the verdicts alone.
    `baseline`: a run to compare with (the path of a JSON report or a results log, a
    `SuiteReport`, case reports, or a `Baseline`; an unreadable one raises ConfigError before
    anything is graded): `report.baseline` marks each case new, fixed, regressed or unchanged
    against the baseline's case of the same name, and every report shows the marks and their
    paired statistics (`report.baseline.statistics`).
    `k`: the k at which the summary gives pass@k and pass^k of cases with several attempts
    (default: 1, 5 and 10 up to the most attempts a case has, and that number; see
    docs/reports.md, "Many attempts and pass@k"); each must be a whole number >= 1.
    `confidence`: the level of the summary's intervals (`pass_rate_interval`, each grader's
    `mean_score_interval`, pass@k's; docs/reports.md, "Error bars and significance").

    The report's cases are in the suite's order. Ctrl-C stops the run: the report then holds
    the cases that finished and has `complete=False`. While the run grades, `os._exit` in
    this process raises ExitRefusedError in its caller (a grader's error result) instead of
    ending the process (docs/runner.md, "Failure isolation").
    """
    jobs = default_jobs() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
    if isolation not in (None, "thread", "process"):
        raise ValueError(f"isolation must be 'thread' or 'process', got {isolation!r}")
    if memory_limit_mb is not None and memory_limit_mb <= 0:
        raise ValueError(f"memory_limit_mb must be > 0, got {memory_limit_mb!r}")
    if isinstance(max_text, bool) or not isinstance(max_text, int) or max_text < 1:
        raise ValueError(f"max_text must be a whole number of bytes >= 1, got {max_text!r}")
    ks = checked_ks(k)
    confidence = check_confidence(confidence)
    selection = as_selection(select)
    _check_sandbox(sandbox)
    base = None if baseline is None else Baseline.load(baseline)
    folder = os.path.dirname(os.path.abspath(suite.path)) if suite.path else None
    settings = Settings(
        timeout=suite.timeout if timeout is None else seconds(timeout),
        isolation=isolation,
        memory_limit_mb=memory_limit_mb,
        suite_dir=folder,
        sandbox=suite.sandbox if sandbox is None else sandbox,
        max_text=max_text if samples else None,
    )
    with contextlib.ExitStack() as stack:
        log = resume
        if resume is not None and not isinstance(resume, (ResultsLog, CaseStream)):
            log = stack.enter_context(ResultsLog(resume))
        assert log is None or isinstance(log, (ResultsLog, CaseStream))
        stack.enter_context(stopping_on(signal.SIGINT, only_if_default=True))
        stack.callback(detach_stdin())  # graders never read gradekit's stdin; restored after
        stack.enter_context(refusing_exits())  # a grader's os._exit is its error result
        tally = None if base is None or isinstance(log, ResultsLog) else base.tally()
        if isinstance(log, CaseStream):
            log.tally = tally  # each case counted, and streamed into the JSON report marked
        # Without a log to read the cases back from, the collector counts them as they end.
        counting = tally if log is None else None
        collection = Collection(
            suite, settings, jobs, on_case, keep_cases, selection, log, ks, tally=counting
        )
        # A run context of its own (what its grades share), with the options in effect.
        run = stack.enter_context(RunContext(current_run().options))
        try:
            report = _with_figures(collection.run(_remote(executor, scheduler)), run)
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


def _with_figures(report: SuiteReport, run: RunContext) -> SuiteReport:
    """The report with what the run's judge calls cost in its summary (`summary.judge`),
    when a judge ran."""
    judge = run.figures().get("judge")
    if judge is None:
        return report
    return attrs.evolve(report, stored_summary=attrs.evolve(report.summary, judge=judge))


def _remote(executor: Executor | None, scheduler: str | None) -> Remote | None:
    """The executor of `run_suite(executor=..., scheduler=...)`: None to grade here."""
    if executor is None or executor == "local":  # None: what older callers gave
        if scheduler is not None:
            raise ValueError(
                f"scheduler={scheduler!r} needs executor='dask'; the local executor has none"
            )
        return None
    from gradekit.run.dask import DaskExecutor

    if executor == "dask":
        return DaskExecutor(scheduler)
    if not isinstance(executor, DaskExecutor):
        raise ValueError(
            f"executor must be 'local', 'dask' or a gradekit.DaskExecutor, got {executor!r}"
        )
    if scheduler is not None:
        raise ValueError("give the scheduler to DaskExecutor(scheduler) or as scheduler=, not both")
    return executor


def _check_sandbox(sandbox: str | None) -> None:
    from gradekit._errors import SandboxError
    from gradekit.process.bubblewrap import check_mode, requested_problem

    wrong = check_mode(sandbox)
    if wrong is not None:
        raise ValueError(f"sandbox: {wrong}")
    problem = requested_problem(sandbox)
    if problem is not None:
        raise SandboxError(problem)
