"""`gradekit run`: load the suite, check the report paths, grade, write every report, print.

The steps the command adds to `run_suite`: report paths are checked before anything is graded
(a bad one exits 2), a scratch results log holds the cases while the reports are written when
`--resume` gives none, every report is attempted even when one cannot be written (exit 3), and
the exit code says how the run ended (0, 1, 3, or 128 + the signal that stopped it).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Final

from gradekit.run.interrupts import RECORDING, first_signal

if TYPE_CHECKING:
    from gradekit._errors import WriteError
    from gradekit.report.console import Progress
    from gradekit.report.model import SuiteReport
    from gradekit.run.resume import ResultsLog
    from gradekit.run.selection import Selection
    from gradekit.suite.model import Suite

__all__ = ["EXIT_FAILED", "EXIT_INVALID", "EXIT_PASSED", "EXIT_UNWRITTEN", "Invalid", "load", "run"]

EXIT_PASSED: Final = 0
EXIT_FAILED: Final = 1
EXIT_INVALID: Final = 2
EXIT_UNWRITTEN: Final = 3
"""A report or the results log could not be written (every other report was)."""


class Invalid(Exception):
    """The suite or the command line cannot be used: `main` prints the lines and exits 2."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def load(path: str) -> Suite:
    """The suite at `path`, or Invalid with every problem of the file."""
    from gradekit._errors import ConfigError
    from gradekit.suite.load import load_suite

    try:
        return load_suite(path)
    except ConfigError as error:
        raise Invalid(*str(error).splitlines()) from error


def run(args: argparse.Namespace) -> int:
    """`gradekit run`: grade the suite, write the reports, print the summary; the exit code."""
    if args.executor == "dask":
        raise Invalid(
            "gradekit: --executor dask is not available yet: gradekit has no dask executor in "
            "this version; use --executor local (the default)"
        )
    from gradekit import ResultsLog, Selection
    from gradekit._errors import WriteError
    from gradekit._scratch import sweep
    from gradekit.report.console import Progress, one_line_summary, print_summary
    from gradekit.report.target import probe
    from gradekit.report.writers import write_reports

    suite = load(args.suite)
    wanted = [("json", args.output), ("junit", args.junit), ("markdown", args.markdown)]
    targets = [(form, path) for form, path in [*wanted, ("html", args.html)] if path]
    show = not args.quiet
    progress = Progress(
        None if args.filter else suite.case_count, enabled=show and sys.stderr.isatty()
    )
    selection = None
    if args.filter:
        said = "--filter " + " or ".join(repr(p) for p in args.filter)
        selection = Selection.names(*args.filter, description=said)
    with contextlib.ExitStack() as stack:
        try:
            for path in [path for _, path in targets] + ([args.resume] if args.resume else []):
                probe(path)  # refused before anything is graded
            sweep()  # what killed runs left in the temp folder
            log = stack.enter_context(ResultsLog(args.resume)) if args.resume or targets else None
        except WriteError as error:
            raise Invalid(f"gradekit: {error}; nothing was graded") from error
        final, failures = _grade(args, suite, selection, log, progress, keep=show)
        with contextlib.suppress(KeyboardInterrupt), RECORDING:  # written whole, even then
            failures += write_reports(final, targets, log)
        failing = log.failing() if log is not None else iter(final.cases)
        for failure in failures:
            print(f"gradekit: {failure}", file=sys.stderr)
        if show:
            if not progress.enabled:
                print(one_line_summary(final), file=sys.stderr)
            print_summary(final, failing, sys.stdout)
    return _exit_code(final, failures)


def _grade(
    args: argparse.Namespace,
    suite: Suite,
    selection: Selection | None,
    log: ResultsLog | None,
    progress: Progress,
    *,
    keep: bool,
) -> tuple[SuiteReport, list[WriteError]]:
    """Run the suite as the arguments say; the report, and the results log's write failure."""
    from gradekit import run_suite
    from gradekit._errors import ConfigError, SelectionError, WriteError

    advance = (lambda case: progress.advance()) if progress.enabled else None
    if log is not None:
        log.on_resumed = advance
    with progress:
        try:
            final = run_suite(
                suite,
                jobs=args.jobs,
                on_case=advance,
                timeout=args.timeout,
                isolation=args.isolation,
                memory_limit_mb=args.memory_limit,
                select=selection,
                resume=log,
                # The console lists the cases that did not pass: from the log when there is one.
                keep_cases=(lambda case: case.outcome != "pass") if keep and log is None else False,
            )
        except SelectionError as error:
            raise Invalid(f"gradekit: {error}") from error
        except ConfigError as error:  # a results log that is not one
            raise Invalid(*str(error).splitlines()) from error
        except WriteError as error:
            if error.report is None:
                raise
            return error.report, [error]
    return final, []


def _exit_code(final: SuiteReport, failures: list[WriteError]) -> int:
    signum = first_signal()
    if signum is None and not final.complete and not failures:
        signum = signal.SIGINT  # stopped by a KeyboardInterrupt that no handler of ours saw
    if signum is not None:
        return 128 + signum
    if failures:
        return EXIT_UNWRITTEN
    return EXIT_PASSED if final.passed else EXIT_FAILED
