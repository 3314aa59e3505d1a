"""Where the cases of `gradekit run` go, and what is made of them after the run.

`log_of` chooses where finished cases are kept: the `--resume` log, or a `CaseStream` that
writes them straight into the JSON report (and spools them for the other reports, or for
GitHub's annotations), or nowhere. `write_all` writes every report asked for, each announced
on stderr; `print_summaries` prints what the console shows after the run.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradekit._errors import WriteError
    from gradekit.report.model import SuiteReport
    from gradekit.report.progress import Progress
    from gradekit.run.resume import ResultsLog
    from gradekit.run.stream import CaseStream
    from gradekit.suite.model import Suite

__all__ = ["log_of", "print_summaries", "write_all"]


def write_all(
    final: SuiteReport,
    targets: list[tuple[str, str]],
    log: ResultsLog | CaseStream | None,
    *,
    show: bool,
) -> list[WriteError]:
    """Every report asked for, each announced on stderr unless quiet; the failures."""
    from gradekit.report.progress import ReportsProgress
    from gradekit.report.writers import write_reports
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
    from gradekit.graders import _judge
    from gradekit.report import terminal
    from gradekit.report.console import one_line_summary, print_summary

    if not live:
        print(one_line_summary(final, colour=terminal.colour(sys.stderr)), file=sys.stderr)
    print_summary(final, log.failing() if log is not None else iter(final.cases), sys.stdout)
    _judge.print_statistics(sys.stdout)


def targets_of(args: argparse.Namespace, suite: Suite) -> tuple[list[tuple[str, str]], str | None]:
    """The reports asked, `(form, path)` each, and what clashes among them, the `--resume` log
    and the suite's own files (None when nothing does)."""
    from gradekit.cli.paths import path_clash

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
