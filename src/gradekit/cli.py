"""The `gradekit` command: run, validate, kinds, schema (and check-pack, not yet available).

Exit codes: 0 every case passed; 1 some case failed or errored, or the run was interrupted;
2 the suite or the command line is invalid and nothing was graded. Progress goes to stderr;
the summary to stdout; reports where they are asked. The command is a thin layer over the
Python API: `load_suite`, `run_suite` and the writers of `gradekit.report`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from gradekit.report.jsonl import CaseLog
    from gradekit.suite.model import Suite

__all__ = ["EXIT_FAILED", "EXIT_INVALID", "EXIT_PASSED", "main"]

EXIT_PASSED: Final = 0
EXIT_FAILED: Final = 1
EXIT_INVALID: Final = 2


class _Invalid(Exception):
    """The suite or the command line cannot be used: print the lines, exit 2."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradekit",
        description="Grade what AI agents produce, from YAML suites.",
        epilog="Exit codes: 0 every case passed, 1 a case failed or errored (or the run was "
        "interrupted), 2 invalid suite or command line (nothing graded).",
    )
    parser.add_argument("--version", action="version", version=f"gradekit {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser("run", help="grade a suite and write reports")
    run.add_argument("suite", metavar="SUITE", help="the suite file (YAML)")
    run.add_argument("-o", "--output", metavar="FILE", help="write the JSON report to FILE")
    run.add_argument("--junit", metavar="FILE", help="write a JUnit XML report to FILE")
    run.add_argument("--markdown", metavar="FILE", help="write a Markdown summary to FILE")
    run.add_argument("--html", metavar="FILE", help="write a self-contained HTML report to FILE")
    run.add_argument(
        "--jobs", type=_positive_int, metavar="N", help="grade at most N cases at once"
    )
    run.add_argument(
        "--resume",
        metavar="FILE",
        help="results log (JSONL): cases already in it are not graded again; each finished "
        "case is appended as it ends",
    )
    run.add_argument(
        "--executor", choices=("local", "dask"), default="local", help="where to grade"
    )
    run.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="Dask scheduler for --executor dask (default: $GRADEKIT_DASK_SCHEDULER, else a "
        "local cluster)",
    )
    run.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="S",
        help="default timeout of each grader, in seconds (a grader's own `timeout` wins)",
    )
    run.add_argument(
        "--isolation",
        choices=("thread", "process"),
        help="default isolation of each grader (a grader's own `isolation` wins)",
    )
    run.add_argument(
        "--memory-limit",
        type=_positive_int,
        metavar="MB",
        help="memory limit of each process-isolated grader, in MiB",
    )
    run.add_argument(
        "--filter",
        action="append",
        metavar="GLOB",
        default=[],
        help="grade only cases whose name matches GLOB (repeat for several)",
    )
    run.add_argument(
        "--judge-concurrency",
        type=_positive_int,
        metavar="N",
        help="LLM judge calls in flight at once, over the whole run (default 8)",
    )
    caching = run.add_mutually_exclusive_group()
    caching.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="cache judge replies in DIR (default: .gradekit-cache/ beside the suite)",
    )
    caching.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the judge cache"
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    run.set_defaults(handler=_run)

    validate = commands.add_parser("validate", help="load and check a suite, grade nothing")
    validate.add_argument("suite", metavar="SUITE", help="the suite file (YAML)")
    validate.set_defaults(handler=_validate)

    kinds = commands.add_parser("kinds", help="every grader kind and where it comes from")
    kinds.add_argument("--json", action="store_true", help="print JSON, for tools")
    kinds.set_defaults(handler=_kinds)

    schema = commands.add_parser("schema", help="JSON Schema of the suite file, for editors")
    schema.set_defaults(handler=_schema)

    compare = commands.add_parser(
        "compare", help="what changed since a baseline run; exit 1 when something regressed"
    )
    compare.add_argument("base", metavar="BASE", help="the baseline: a JSON report or results log")
    compare.add_argument("new", metavar="NEW", help="the new run: a JSON report or results log")
    compare.add_argument("--markdown", metavar="FILE", help="write the comparison as Markdown")
    compare.add_argument("--html", metavar="FILE", help="write the comparison as an HTML page")
    compare.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    compare.add_argument(
        "--tolerance", type=float, default=0.0, metavar="X", help="ignore score changes <= X"
    )
    compare.add_argument(
        "--fail-on",
        default="regressions",
        metavar="RULES",
        help="what makes the exit code 1: regressions, new-errors, score-drop:N "
        "(comma-separated; default regressions)",
    )
    compare.set_defaults(handler=_compare)

    pack = commands.add_parser("check-pack", help="check every kind a distribution registers")
    pack.add_argument("dist", metavar="DIST", help="the distribution's name")
    pack.set_defaults(handler=_check_pack)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gradekit")
    except PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `gradekit` command with `argv` (default: the process's arguments)."""
    args = _parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except _Invalid as invalid:
        for line in invalid.lines:
            print(line, file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("gradekit: interrupted", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader of our output went away (`gradekit kinds | head`): not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (lives until exit)
        return EXIT_PASSED


# -- validate and run --------------------------------------------------------------------


def _load(path: str) -> Suite:
    from gradekit._errors import ConfigError
    from gradekit.suite.load import load_suite

    try:
        return load_suite(path)
    except ConfigError as error:
        raise _Invalid(*str(error).splitlines()) from error


def _validate(args: argparse.Namespace) -> int:
    suite = _load(args.suite)
    cases = 0
    problems: list[str] = []
    for case in suite.cases():
        cases += 1
        if case.error is not None:
            problems.append(case.error)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise _Invalid(*problems, f"{args.suite}: {len(problems)} {noun}; nothing was graded")
    noun = "case" if cases == 1 else "cases"
    print(f"{args.suite}: valid: suite '{suite.name}', {cases} {noun}")
    return EXIT_PASSED


def _writers(args: argparse.Namespace) -> list[tuple[str, Callable[..., None]]]:
    from gradekit import report

    def write_json(final: Any, path: str, collector: Any) -> None:
        # The log's lines are the report's items already: copied, not parsed and re-encoded.
        report.write_json(final, path, collector.case_texts())

    def reading(writer: Callable[..., None]) -> Callable[..., None]:
        return lambda final, path, collector: writer(final, path, collector.cases())

    wanted = [
        (args.output, write_json),
        (args.junit, reading(report.write_junit)),
        (args.markdown, reading(report.write_markdown)),
        (args.html, reading(report.write_html)),
    ]
    return [(path, writer) for path, writer in wanted if path]


@contextlib.contextmanager
def _open_log(args: argparse.Namespace, needed: bool) -> Iterator[CaseLog | None]:
    """The results log: the `--resume` file, else a scratch file when reports are written
    (they are streamed from it), else none."""
    from gradekit.report.jsonl import CaseLog

    if args.resume:
        try:
            log = CaseLog(args.resume)
        except OSError as error:
            raise _Invalid(
                f"gradekit: cannot open the results log {args.resume}: "
                f"{error.strerror or error}; check the path"
            ) from error
        with log:
            yield log
        return
    if not needed:
        yield None
        return
    fd, scratch = tempfile.mkstemp(prefix="gradekit-", suffix=".jsonl")
    os.close(fd)
    try:
        with CaseLog(scratch, durable=False) as log:
            yield log
    finally:
        with contextlib.suppress(OSError):
            os.unlink(scratch)


def _run(args: argparse.Namespace) -> int:
    from gradekit._errors import ConfigError
    from gradekit.graders import _judge
    from gradekit.report.console import Progress, one_line_summary, print_summary
    from gradekit.report.model import SuiteReport
    from gradekit.run.resume import Collector
    from gradekit.run.runner import run_suite

    _judge.configure(
        concurrency=args.judge_concurrency, cache=not args.no_cache, cache_dir=args.cache_dir
    )
    suite = _load(args.suite)
    writers = _writers(args)
    show = not args.quiet
    tty = show and sys.stderr.isatty()
    with _open_log(args, needed=bool(writers)) as log, _executor(args) as executor:
        progress = Progress(
            None if args.filter else suite.case_count, enabled=tty, stream=sys.stderr
        )
        try:
            collector = Collector(suite, log, patterns=args.filter, on_progress=progress.advance)
        except ConfigError as error:
            raise _Invalid(*str(error).splitlines()) from error
        with progress, _DeferredInterrupt().installed() as deferred:

            def on_case(case: Any) -> None:
                # A case is in the log and in the reports, or in neither: never half-recorded.
                with deferred:
                    collector.on_case(case)

            outcome = run_suite(
                collector.suite(),
                jobs=args.jobs,
                on_case=on_case,
                timeout=args.timeout,
                isolation=args.isolation,
                keep_cases=False,
                memory_limit_mb=args.memory_limit,
                executor=executor,
            )
        if args.filter and collector.selected == 0:
            patterns = " or ".join(repr(p) for p in args.filter)
            raise _Invalid(
                f"gradekit: no case of {args.suite} matches --filter {patterns}; nothing was "
                "graded: check the pattern (a glob such as 'growth-*')"
            )
        final = SuiteReport(
            suite.name,
            (),
            complete=outcome.complete,
            duration_ms=outcome.duration_ms,
            stored_summary=_with_judge(collector.summary(), _judge.statistics()),
        )
        for path, writer in writers:
            _write(writer, final, path, collector)
    if show:
        if not tty:
            print(one_line_summary(final), file=sys.stderr)
        print_summary(final, collector.failing, collector.more_failing, sys.stdout)
        _judge.print_statistics(sys.stdout)
    return EXIT_PASSED if final.passed else EXIT_FAILED


@contextlib.contextmanager
def _executor(args: argparse.Namespace) -> Iterator[Any]:
    """`local`, or a Dask executor connected for the run and closed after (exit 2 when its
    cluster cannot be used)."""
    if args.executor == "local":
        if args.scheduler:
            raise _Invalid("gradekit: --scheduler needs --executor dask")
        yield "local"
        return
    if args.judge_concurrency or args.cache_dir or args.no_cache:
        raise _Invalid(
            "gradekit: --judge-concurrency, --cache-dir and --no-cache set up the judge of this "
            "process and do not reach Dask workers; leave them out with --executor dask"
        )
    from gradekit._errors import ExecutorError
    from gradekit.run.dask import DaskExecutor

    try:
        executor = DaskExecutor(args.scheduler).connect()
    except ExecutorError as error:
        raise _Invalid(f"gradekit: {error}") from error
    with executor:
        try:
            yield executor
        except ExecutorError as error:  # the cluster was lost mid-run: the log keeps the rest
            print(f"gradekit: {error}", file=sys.stderr)
            raise SystemExit(EXIT_FAILED) from error


def _with_judge(summary: Any, stats: Any) -> Any:
    """The summary with the run's LLM judge statistics as its `judge`, when a judge ran."""
    import attrs

    return summary if stats is None else attrs.evolve(summary, judge=stats.to_dict())


class _DeferredInterrupt:
    """Ctrl-C during a `with self:` block is raised when the block ends, not in its middle.

    Takes effect while `installed()` (its SIGINT handler; main thread only).
    """

    def __init__(self) -> None:
        self._inside = False
        self._pending = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[_DeferredInterrupt]:
        """Handle SIGINT while the block runs; the previous handler comes back after."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.signal(signal.SIGINT, self._handler)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)

    def _handler(self, signum: int, frame: Any) -> None:
        if self._inside:
            self._pending = True
        else:
            raise KeyboardInterrupt

    def __enter__(self) -> None:
        self._inside = True

    def __exit__(self, *exc_info: object) -> None:
        self._inside = False
        if self._pending:
            self._pending = False
            raise KeyboardInterrupt


def _write(writer: Callable[..., None], final: Any, path: str, collector: Any) -> None:
    try:
        writer(final, path, collector)
    except OSError as error:
        # Grading is done and the results log (if any) is kept: say so and fail the run.
        print(
            f"gradekit: cannot write {path}: {error.strerror or error}; check the path",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_FAILED) from error


# -- kinds, schema, check-pack -----------------------------------------------------------


def _kinds(args: argparse.Namespace) -> int:
    from gradekit._errors import GradekitError
    from gradekit.registry.registry import default_registry

    failures: dict[str, str] = {}
    for kind in default_registry.kinds():
        try:
            default_registry.factory(kind)
        except GradekitError as error:
            failures[kind] = str(error)
    rows: list[dict[str, Any]] = [
        {
            "kind": info.kind,
            "distribution": info.distribution,
            "version": info.version,
            "entry_point": info.value,
            "error": info.error or failures.get(info.kind),
        }
        for info in default_registry.describe()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_PASSED
    from gradekit.report.console import print_table

    usable = [row for row in rows if row["error"] is None]
    print_table(
        f"{len(usable)} grader kinds",
        ["kind", "distribution", "version", "entry point"],
        [
            [str(row[key]) for key in ("kind", "distribution", "version", "entry_point")]
            for row in usable
        ],
        sys.stdout,
    )
    broken = [row for row in rows if row["error"] is not None]
    if broken:
        print(f"\n{len(broken)} failed to load:")
        for row in broken:
            print(f"  {row['kind']}: {row['error']}")
    return EXIT_PASSED


def _schema(args: argparse.Namespace) -> int:
    from gradekit.registry.registry import default_registry
    from gradekit.suite.schema import suite_schema

    print(json.dumps(suite_schema(default_registry), indent=2))
    return EXIT_PASSED


def _compare(args: argparse.Namespace) -> int:
    from gradekit._errors import ConfigError
    from gradekit.report import compare_views
    from gradekit.report.compare import compare, parse_fail_on

    try:
        rules = parse_fail_on(args.fail_on)
        comparison = compare(args.base, args.new, tolerance=args.tolerance)
    except ConfigError as error:
        raise _Invalid(f"gradekit: {error}") from error
    sys.stdout.write(compare_views.render_text(comparison))
    for path, writer in (
        (args.markdown, compare_views.write_compare_markdown),
        (args.html, compare_views.write_compare_html),
        (args.json, compare_views.write_compare_json),
    ):
        if path:
            _write(lambda value, to, _, write=writer: write(value, to), comparison, path, None)
    broken = comparison.failures(rules)
    for line in broken:
        print(f"gradekit: {line}", file=sys.stderr)
    return EXIT_FAILED if broken else EXIT_PASSED


def _check_pack(args: argparse.Namespace) -> int:
    raise _Invalid(
        f"gradekit: check-pack is not available yet in gradekit {_version()}; to check "
        f"{args.dist}'s kinds now, run gradekit.testing's contract tests with pytest"
    )
