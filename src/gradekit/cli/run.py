"""`gradekit run`: load the suite, check the report paths, grade, write every report, print.

The steps the command adds to `run_suite`: report paths are checked before anything is graded
(a bad one exits 2), the cases go straight to the reports as they end when `--resume` gives no
log (`run.stream`), every report is attempted even when one cannot be written (exit 3), and
the exit code says how the run ended (0, 1, 3, or 128 + the signal that stopped it).

`log_of` chooses where finished cases are kept: the `--resume` log, or a `CaseStream` that
writes them straight into the JSON report (and spools them for the other reports, or for
GitHub's annotations), or nowhere. `write_all` writes every report asked for, each announced
on stderr; `print_summaries` prints what the console shows after the run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from gradekit.cli.gates import (
    ANNOTATION_OPTIONS,
    BASELINE_OPTIONS,
    GATE_OPTIONS,
    baseline_failures,
    baseline_of,
    fail_on_of,
    failed_gates,
    gates_given,
    github_wanted,
    report_to_github,
)
from gradekit.cli.options import (
    ATTEMPT_OPTIONS,
    EXIT_FAILED,
    EXIT_PASSED,
    EXIT_UNWRITTEN,
    SELECT_OPTIONS,
    Invalid,
    Option,
    k_note,
    output_path,
    path_clash,
    positive_seconds,
    selection_of,
    whole_number,
)
from gradekit.report.text import escaped
from gradekit.run.exits import RECORDING, first_signal

if TYPE_CHECKING:
    from gradekit.core.errors import WriteError
    from gradekit.history.baseline import Baseline
    from gradekit.report.model import SuiteReport
    from gradekit.report.progress import Progress
    from gradekit.run.resume import ResultsLog
    from gradekit.run.stream import CaseStream
    from gradekit.suite.model import Suite
    from gradekit.suite.selection import Selection

__all__ = [
    "RUN_OPTIONS",
    "load",
    "log_of",
    "print_summaries",
    "run",
    "targets_of",
    "warn",
    "write_all",
]

RUN_OPTIONS: Final[tuple[Option, ...]] = (
    (
        ("-o", "--output"),
        {"type": output_path, "metavar": "FILE", "help": "write the JSON report to FILE"},
    ),
    (
        ("--junit",),
        {"type": output_path, "metavar": "FILE", "help": "write a JUnit XML report to FILE"},
    ),
    (
        ("--markdown",),
        {"type": output_path, "metavar": "FILE", "help": "write a Markdown summary to FILE"},
    ),
    (
        ("--html",),
        {
            "type": output_path,
            "metavar": "FILE",
            "help": "write a self-contained HTML report to FILE",
        },
    ),
    (
        ("--jobs",),
        {"type": whole_number(1), "metavar": "N", "help": "grade at most N cases at once"},
    ),
    (
        ("--resume",),
        {
            "type": output_path,
            "metavar": "FILE",
            "help": "results log (JSONL): cases already in it are not graded again; each "
            "finished case is appended as it ends",
        },
    ),
    (("--executor",), {"choices": ("local", "dask"), "default": "local", "help": "where to grade"}),
    (
        ("--scheduler",),
        {
            "metavar": "ADDR",
            "help": "Dask scheduler for --executor dask (default: $GRADEKIT_DASK_SCHEDULER, else a "
            "local cluster)",
        },
    ),
    (
        ("--dask-timeout",),
        {
            "type": positive_seconds,
            "metavar": "S",
            "help": "with --executor dask: end the run once the scheduler has had no worker for "
            "S seconds (default 300); the results log keeps every finished case",
        },
    ),
    (
        ("--timeout",),
        {
            "type": positive_seconds,
            "metavar": "S",
            "help": "default timeout of each grader, in seconds (a grader's own `timeout` wins)",
        },
    ),
    (
        ("--isolation",),
        {
            "choices": ("thread", "process"),
            "help": "default isolation of each grader (a grader's own `isolation` wins)",
        },
    ),
    (
        ("--memory-limit",),
        {
            "type": whole_number(1),
            "metavar": "MB",
            "help": "memory limit of each process-isolated grader, in MiB",
        },
    ),
    (
        ("--sandbox",),
        {
            "choices": ("auto", "bwrap", "none"),
            "help": "default sandbox of agent code (program, build, lint, process isolation): "
            "bubblewrap, or none; auto uses bubblewrap when it can run (a grader's own wins)",
        },
    ),
    (
        ("--judge-concurrency",),
        {
            "type": whole_number(1),
            "metavar": "N",
            "help": "LLM judge calls in flight at once, over the whole run (default 8)",
        },
    ),
    (
        ("--max-text",),
        {
            "type": whole_number(1),
            "metavar": "BYTES",
            "help": "cut each text of the samples in the reports at BYTES (default 4096)",
        },
    ),
    (
        ("--no-samples",),
        {
            "action": "store_true",
            "help": "reports carry the verdicts alone, not the samples graded",
        },
    ),
    (("-q", "--quiet"), {"action": "store_true", "help": "no progress and no summary"}),
    *SELECT_OPTIONS,
    *GATE_OPTIONS,
    *BASELINE_OPTIONS,
    *ANNOTATION_OPTIONS,
    *ATTEMPT_OPTIONS,
)
"""The options of `gradekit run`, as argparse takes them (flags, keyword arguments)."""


def load(path: str, *, strict: bool = False) -> Suite:
    """The suite at `path` (its load warnings printed), or Invalid with every problem of the
    file; `strict` makes every warning an error."""
    from gradekit.core.errors import ConfigError
    from gradekit.suite.load import load_suite

    try:
        suite = load_suite(path, strict=strict)
    except ConfigError as error:
        raise Invalid(*str(error).splitlines()) from error
    warn(suite, 0)
    return suite


def warn(suite: Suite, shown: int) -> int:
    """Print the suite's warnings from the `shown`-th on, on stderr; the count printed so far
    (dataset lines add theirs while they are read)."""
    for line in suite.warnings[shown:]:
        print(f"warning: {escaped(line)}", file=sys.stderr)
    return len(suite.warnings)


def run(args: argparse.Namespace) -> int:
    """`gradekit run`: grade the suite, write the reports, print the summary; the exit code."""
    from gradekit.core.context import DEFAULT_JUDGE_CONCURRENCY, RunContext, RunOptions
    from gradekit.core.errors import ConfigError, WriteError
    from gradekit.core.scratch import sweep
    from gradekit.report.files import probe
    from gradekit.report.progress import Progress
    from gradekit.run.exits import CURRENT_STDERR

    options = RunOptions(
        judge_concurrency=args.judge_concurrency or DEFAULT_JUDGE_CONCURRENCY,
        judge_cache=not args.no_cache,
        judge_cache_dir=args.cache_dir,
    )
    if args.no_samples and args.max_text is not None:
        raise Invalid("gradekit: --max-text bounds the samples --no-samples leaves out; give one")
    try:
        selection = selection_of(args)
        baseline = baseline_of(args)
        fail_on_of(args)
    except ConfigError as error:
        raise Invalid(str(error)) from error
    github = github_wanted(args)
    suite = load(args.suite, strict=args.strict)
    shown = len(suite.warnings)
    _check_sandbox(args.sandbox)
    targets, clash = targets_of(args, suite)
    if clash is not None:
        raise Invalid(f"gradekit: {clash}; nothing was graded")
    _supervise(args, suite, bool(targets or github))  # the supervising process exits there
    show = not args.quiet
    progress = Progress(
        None if selection is not None else suite.case_count, enabled=show, stream=CURRENT_STDERR
    )
    with contextlib.ExitStack() as stack:
        stack.enter_context(RunContext(options))  # the run takes its judge options from it
        try:
            for path in [path for _, path in targets] + ([args.resume] if args.resume else []):
                probe(path)  # refused before anything is graded
            sweep()  # what killed runs left in the temp folder
            log = log_of(args, targets, stack, github=github, progress=progress)
        except WriteError as error:
            raise Invalid(f"gradekit: {error}; nothing was graded") from error
        executor = stack.enter_context(_executor(args))
        final, failures = _grade(
            args, suite, selection, log, progress, executor=executor, keep=show, baseline=baseline
        )
        warn(suite, shown)  # those of the dataset's lines
        with contextlib.suppress(KeyboardInterrupt), RECORDING:  # written whole, even then
            failures += write_all(final, targets, log, show=show)
        for failure in failures:
            print(f"gradekit: {escaped(str(failure))}", file=sys.stderr)
        if (note := k_note(final, args.k)) is not None:
            print(note, file=sys.stderr)
        if show:
            print_summaries(final, log, live=progress.live)
        if github and log is not None:
            failures += report_to_github(
                final, suite, failing=log.failing(), cases=log.cases(), out=sys.stdout
            )
    return _exit_code(final, failures, args)


def _supervise(args: argparse.Namespace, suite: Suite, reports: bool) -> None:
    """A suite whose graders may hold the GIL runs supervised (`cli.supervise`): the
    supervising process exits with the run's code once it has ended; the run returns."""
    if not getattr(args, "own_command", False) or getattr(args, "reports_only", None):
        return  # main() called by another program, or the reports of a run that was ended
    from gradekit.cli.supervise import supervise

    supervise(args, suite, rescue=reports or bool(args.resume), run=run)


def _grade(
    args: argparse.Namespace,
    suite: Suite,
    selection: Selection | None,
    log: ResultsLog | CaseStream | None,
    progress: Progress,
    *,
    executor: Any,
    keep: bool,
    baseline: Baseline | None = None,
) -> tuple[SuiteReport, list[WriteError]]:
    """Run the suite as the arguments say; the report, and the results log's write failure."""
    from gradekit.core.errors import ConfigError, SelectionError, WriteError
    from gradekit.run.exits import after_graders
    from gradekit.run.rescue import Rescue
    from gradekit.run.resume import ResultsLog
    from gradekit.run.runner import run_suite
    from gradekit.run.settings import GraderDefaults, Outputs, Statistics
    from gradekit.run.stream import CaseStream

    advance = (lambda case: progress.advance(case.outcome)) if progress.enabled else None
    if log is not None:
        # The log (or the stream) counts the progress from each case's outcome: the run then
        # needs no report object of the cases it only writes (see `Collection.encode`).
        log.on_resumed = advance
        log.on_recorded = progress.advance if progress.enabled else None
    # The console lists the cases that did not pass: from the log when there is one.
    failing = (lambda case: case.outcome != "pass") if keep and log is None else False
    folder = os.getcwd()  # where relative report paths lead, whatever a grader's os.chdir
    rescue_fd: int | None = getattr(args, "rescue_fd", None)  # a supervised run's
    with progress, after_graders(folder):
        try:
            final = run_suite(
                suite,
                jobs=_jobs(args),
                on_case=advance if log is None else None,
                select=selection,
                resume=log if isinstance(log, ResultsLog) else None,
                executor=executor,
                defaults=GraderDefaults(
                    timeout=args.timeout,
                    isolation=args.isolation,
                    memory_limit_mb=args.memory_limit,
                    sandbox=args.sandbox,
                ),
                outputs=Outputs(
                    keep_cases=failing,
                    samples=not args.no_samples,
                    max_text=4096 if args.max_text is None else args.max_text,
                    stream=log if isinstance(log, CaseStream) else None,
                    rescue=None
                    if rescue_fd is None
                    else Rescue(rescue_fd, marks=getattr(args, "rescue_marks", None)),
                ),
                statistics=Statistics(baseline=baseline, k=args.k, confidence=args.confidence),
            )
        except SelectionError as error:
            raise Invalid(f"gradekit: {error}") from error
        except ConfigError as error:  # a results log that is not one
            raise Invalid(*str(error).splitlines()) from error
        except WriteError as error:
            if error.report is None:
                raise
            return error.report, [error]
    if getattr(args, "reports_only", None) is not None:  # a run that was ended (cli.supervise)
        import attrs

        final = attrs.evolve(final, complete=False)
    return final, []


@contextlib.contextmanager
def _executor(args: argparse.Namespace) -> Iterator[Any]:
    """`local`, or a Dask executor connected for the run and closed after (exit 2 when its
    cluster cannot be used)."""
    if args.executor == "local":
        for flag, given in (("--scheduler", args.scheduler), ("--dask-timeout", args.dask_timeout)):
            if given:
                raise Invalid(f"gradekit: {flag} needs --executor dask")
        yield "local"
        return
    if args.judge_concurrency or args.cache_dir or args.no_cache:
        raise Invalid(
            "gradekit: --judge-concurrency, --cache-dir and --no-cache set up the judge of this "
            "process and do not reach Dask workers; leave them out with --executor dask"
        )
    from gradekit.core.errors import ExecutorError
    from gradekit.run.dask import WORKER_TIMEOUT, DaskExecutor

    waits = WORKER_TIMEOUT if args.dask_timeout is None else args.dask_timeout
    try:
        executor = DaskExecutor(args.scheduler, worker_timeout=waits).connect()
    except ExecutorError as error:
        raise Invalid(f"gradekit: {error}") from error
    with executor:
        try:
            yield executor
        except ExecutorError as error:  # the cluster was lost mid-run: the log keeps the rest
            print(f"gradekit: {error}", file=sys.stderr)
            raise SystemExit(EXIT_FAILED) from error


def _check_sandbox(mode: str | None) -> None:
    if mode is None:
        return  # nothing asked: the process modules stay unimported
    from gradekit.process.bubblewrap import requested_problem

    problem = requested_problem(mode)
    if problem is not None:
        raise Invalid(f"gradekit: --sandbox bwrap: {problem}; nothing was graded")


def _exit_code(final: SuiteReport, failures: list[WriteError], args: argparse.Namespace) -> int:
    signum = first_signal()
    if signum is None and not final.complete and not failures:
        signum = signal.SIGINT  # stopped by a KeyboardInterrupt that no handler of ours saw
    if signum is not None:
        return 128 + signum
    if failures:
        return EXIT_UNWRITTEN
    # Against a baseline, `--fail-on` (default: regressions) fails even when the gates pass.
    broken = baseline_failures(final.baseline, fail_on_of(args), sys.stderr)
    if gates_given(args):  # the gates decide, not every case
        failed = failed_gates(args, final.summary, sys.stderr)
        return EXIT_FAILED if failed or broken else EXIT_PASSED
    return EXIT_PASSED if final.passed else EXIT_FAILED


def write_all(
    final: SuiteReport,
    targets: list[tuple[str, str]],
    log: ResultsLog | CaseStream | None,
    *,
    show: bool,
) -> list[WriteError]:
    """Every report asked for, each announced on stderr unless quiet; the failures."""
    from gradekit.report.files import write_reports
    from gradekit.report.progress import ReportsProgress
    from gradekit.run.stream import CaseStream

    watch = ReportsProgress(sys.stderr).writing if show else None  # stderr as it is now
    failures = []
    if isinstance(log, CaseStream):  # the JSON report's cases were written as they ended
        json_path = next((path for form, path in targets if form == "json"), None)
        if json_path is not None and watch is not None:
            with watch(json_path, final.summary.cases):
                failures += log.write_json(final)
        else:
            failures += log.write_json(final)
        targets = [(form, path) for form, path in targets if form != "json"]
    return failures + write_reports(final, targets, log, watch=watch)


def print_summaries(final: SuiteReport, log: ResultsLog | CaseStream | None, *, live: bool) -> None:
    """The one-line summary on stderr (unless the live bar showed it), the summary with the
    failing cases on stdout, and the judge's statistics."""
    from gradekit.graders.prompt.shared import JudgeStatistics
    from gradekit.report import progress as terminal
    from gradekit.report.console import one_line_summary, print_summary

    if not live:
        print(one_line_summary(final, colour=terminal.colour(sys.stderr)), file=sys.stderr)
    print_summary(final, log.failing() if log is not None else iter(final.cases), sys.stdout)
    if final.summary.judge is not None:  # the judge's line, when a judge ran
        print(JudgeStatistics(**final.summary.judge).describe(), file=sys.stdout)


def targets_of(args: argparse.Namespace, suite: Suite) -> tuple[list[tuple[str, str]], str | None]:
    """The reports asked, `(form, path)` each, and what clashes among them, the `--resume` log
    and the suite's own files (None when nothing does)."""
    wanted = [("json", args.output), ("junit", args.junit), ("markdown", args.markdown)]
    targets = [(form, path) for form, path in [*wanted, ("html", args.html)] if path]
    flags = {"json": "-o", "junit": "--junit", "markdown": "--markdown", "html": "--html"}
    outputs = [(flags[form], path) for form, path in targets]
    outputs += [("--resume", args.resume)] if args.resume else []
    inputs = [("the suite file", suite.path), ("the dataset", suite.dataset)]
    return targets, path_clash(outputs, inputs)


def log_of(
    args: argparse.Namespace,
    targets: list[tuple[str, str]],
    stack: contextlib.ExitStack,
    *,
    github: bool,
    progress: Progress,
) -> ResultsLog | CaseStream | None:
    """The `--resume` log; else, when reports (or GitHub's annotations and step summary) are
    asked, the stream that writes the cases straight to them (spooled only when something
    other than the JSON report needs them back)."""
    from gradekit.run.resume import ResultsLog
    from gradekit.run.stream import CaseStream

    reports_only: str | None = getattr(args, "reports_only", None)
    if reports_only is not None:  # the cases that reached a log, none graded (cli.supervise)
        logged = ResultsLog(args.resume or reports_only, scratch=not args.resume)
        log = stack.enter_context(logged)
        log.only_logged = True
        return log
    gathered: str | None = getattr(args, "gathered", None)
    if gathered is not None and not args.resume:  # the rest of a run (cli.supervise)
        return stack.enter_context(ResultsLog(gathered, scratch=True))
    if args.resume:
        log = stack.enter_context(ResultsLog(args.resume))
        if progress.enabled and not progress.live:
            # Reading a large log before the first case says so in lines (a live bar's clock
            # shows the run is alive, and lines would tear it).
            from gradekit.report.progress import ReportsProgress

            log.watch = ReportsProgress().reading
        return log
    if targets or github:
        others = github or any(form != "json" for form, _ in targets)
        return stack.enter_context(CaseStream(args.output, spool=others))
    return None


def _jobs(args: argparse.Namespace) -> int | None:
    """`--jobs`, or with `--judge-concurrency N` alone at least N: a case waiting for its
    judge holds one of the jobs, so fewer jobs than N would keep N requests from ever being
    in flight. None: the runner's default."""
    jobs: int | None = args.jobs
    concurrency: int | None = args.judge_concurrency
    if jobs is not None or not concurrency:
        return jobs
    from gradekit.run.settings import default_jobs

    return max(default_jobs(), concurrency)
