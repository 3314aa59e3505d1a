"""The `gradekit` command: run, validate, compare, kinds, schema, check-pack, new-pack, traces.

The parser, `main`, and the small commands (validate, compare, kinds, schema, check-pack,
new-pack, traces); `gradekit run` is `cli.run`. `gradekit compare BASE NEW` tells what changed
since a baseline run and exits 1 when a rule of its `--fail-on` is broken: the comparison is
`gradekit.history.compare`, this module parses its options, prints the text view, writes the
files asked for and turns `--fail-on` into the exit code.

A thin layer over the Python API: it parses the arguments, calls `load_suite`, `run_suite` and
the writers of `gradekit.report`, and prints. Progress goes to stderr; the summary to stdout;
reports where they are asked. Exit codes (docs/cli.md): 0 every case passed (with gates given,
`--fail-on` among them: every gate passed); 1 some case failed or errored (with gates: a gate
failed; with `--baseline` and no `--fail-on`: a case regressed; `compare`: a regression, or
what its `--fail-on` names); 2 the suite or the command line is invalid, nothing was graded;
3 a report or the results log could not be written (every other report was); 130 / 143 / 129
stopped by SIGINT (Ctrl-C) / SIGTERM / SIGHUP: the reports are written and marked incomplete.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, TextIO

from gradekit.cli.gates import CONFIDENCE_OPTION
from gradekit.cli.options import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_PASSED,
    EXIT_UNWRITTEN,
    Invalid,
    fraction,
    output_path,
)
from gradekit.cli.run import RUN_OPTIONS, load, warn
from gradekit.cli.run import run as _run
from gradekit.report.text import escaped
from gradekit.run.exits import first_signal, leave, refusing_exits, settle_streams, stopping_on

__all__ = ["EXIT_FAILED", "EXIT_INVALID", "EXIT_PASSED", "EXIT_UNWRITTEN", "main"]


_STRICT_HELP: Final = (
    "make every warning of the loader an error (another framework's key such as ground_truth, "
    "kept as metadata)"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradekit",
        description="Grade what AI agents produce, from YAML suites.",
        epilog="Exit codes: 0 every case passed (with gates: --min-pass-rate, --max-errors, "
        "--fail-on: every gate passed), 1 a case failed or errored (with gates: a gate failed; "
        "with --baseline and no --fail-on: a case regressed, gates or not; compare: a "
        "regression, or what its --fail-on names), 2 invalid suite or "
        "command line (nothing graded), 3 a report or the results log could not be written, "
        "130 / 143 / 129 stopped by Ctrl-C / SIGTERM / SIGHUP (reports written, marked "
        "incomplete).",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser("run", help="grade a suite and write reports")
    run.add_argument("suite", metavar="SUITE", help="the suite file (YAML)")
    for flags, options in RUN_OPTIONS:
        run.add_argument(*flags, **options)
    caching = run.add_mutually_exclusive_group()
    caching.add_argument(
        "--cache-dir", metavar="DIR", help="cache judge replies in DIR (default: .gradekit-cache/)"
    )
    caching.add_argument("--no-cache", action="store_true", help="no judge cache at all")
    run.set_defaults(handler=_run)

    validate = commands.add_parser("validate", help="load and check a suite, grade nothing")
    validate.add_argument("suite", metavar="SUITE", help="the suite file (YAML)")
    validate.set_defaults(handler=_validate)
    for command in (run, validate):
        command.add_argument("--strict", action="store_true", help=_STRICT_HELP)

    _add_compare_command(commands)

    kinds = commands.add_parser("kinds", help="every grader kind and where it comes from")
    kinds.add_argument("--json", action="store_true", help="print JSON, for tools")
    kinds.add_argument(
        "--load",
        action="store_true",
        help="import every plugin's kinds to list those that fail to load (runs the plugins' "
        "code; without it, only installed metadata is read)",
    )
    kinds.set_defaults(handler=_kinds)

    schema = commands.add_parser("schema", help="JSON Schema of the suite file, for editors")
    schema.set_defaults(handler=_schema)

    pack = commands.add_parser("check-pack", help="check every kind a distribution registers")
    pack.add_argument("dist", metavar="DIST", help="the distribution's name")
    pack.set_defaults(handler=_check_pack)

    new_pack = commands.add_parser("new-pack", help="write a ready grader pack to start from")
    new_pack.add_argument("name", metavar="NAME", help="the pack's namespace, such as acme")
    new_pack.add_argument("--dest", default=".", metavar="DIR", help="where to write it")
    new_pack.set_defaults(handler=_new_pack)

    _add_traces_command(commands)
    return parser


class _VersionAction(argparse.Action):
    """`--version`, reading the installed version only when asked: importlib.metadata and the
    search for gradekit's distribution cost start-up time (bench/RESULTS.md), which every
    other command skips."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(nargs=0, default=argparse.SUPPRESS)
        super().__init__(option_strings, argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"gradekit {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gradekit")
    except PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `gradekit` command with `argv` (default: the process's arguments); the exit
    code. As the process's own command (`argv` None) it exits at once, its output flushed,
    when threads a grader started are still running (see `gradekit.run.exits.leave`)."""
    with refusing_exits():  # until the end: an abandoned grader's thread may still call it
        if argv is not None:
            return _main(argv)
        # The process's own command: nothing a grader left may hold its exit.
        try:
            code = _main(argv, own=True)
        except SystemExit as stop:  # argparse's, or a run that could not go on
            if not isinstance(stop.code, int):
                raise
            code = stop.code
        settle_streams()
        return leave(code)


def _main(argv: Sequence[str] | None, *, own: bool = False) -> int:
    args = _parser().parse_args(argv)
    args.own_command = own  # the process's own command: `gradekit run` may fork (cli.supervise)
    handler: Callable[[argparse.Namespace], int] = args.handler
    # SIGHUP: the terminal or the SSH session that started the run went away.
    with stopping_on(signal.SIGINT, signal.SIGTERM, signal.SIGHUP, exit_on_second=True):
        try:
            return handler(args)
        except Invalid as invalid:
            for line in invalid.lines:
                print(escaped(line), file=sys.stderr)
            return EXIT_INVALID
        except KeyboardInterrupt:
            print("gradekit: interrupted", file=sys.stderr)
            return 128 + (first_signal() or signal.SIGINT)
        except BrokenPipeError:
            # The reader of our output went away (`gradekit kinds | head`): not an error of ours.
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (lives until exit)
            return EXIT_PASSED


def _validate(args: argparse.Namespace) -> int:
    from gradekit.suite.load import check_cases

    suite = load(args.suite, strict=args.strict)
    shown = len(suite.warnings)
    check = check_cases(suite)
    warn(suite, shown)  # those of the dataset's lines
    if check.problems:
        count = len(check.problems)
        noun = "problem" if count == 1 else "problems"
        raise Invalid(*check.problems, f"{args.suite}: {count} {noun}; nothing was graded")
    noun = "case" if check.cases == 1 else "cases"
    print(escaped(f"{args.suite}: valid: suite '{suite.name}', {check.cases} {noun}"))
    return EXIT_PASSED


def _kinds(args: argparse.Namespace) -> int:
    from gradekit.registry.registry import default_registry, kind_rows

    rows = kind_rows(default_registry, load=args.load)
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_PASSED
    from gradekit.report.console import print_table

    columns = ("kind", "distribution", "version", "entry_point")
    usable = [[str(row[key]) for key in columns] for row in rows if row["error"] is None]
    headers = ["kind", "distribution", "version", "entry point"]
    print_table(f"{len(usable)} grader kinds", headers, usable, sys.stdout)
    # A conflict is on the row of each plugin in it, with one message naming them all.
    broken = list(dict.fromkeys(f"{row['kind']}: {row['error']}" for row in rows if row["error"]))
    if broken:
        print(f"\n{len(broken)} failed to load:")
        for line in broken:
            print(f"  {escaped(line)}")
    return EXIT_PASSED


def _schema(args: argparse.Namespace) -> int:
    from gradekit.registry.registry import default_registry
    from gradekit.suite.schema import suite_schema

    print(json.dumps(suite_schema(default_registry), indent=2))
    return EXIT_PASSED


def _check_pack(args: argparse.Namespace) -> int:
    from gradekit.testing.commands import check_pack

    return check_pack(args.dist, sys.stdout)


def _new_pack(args: argparse.Namespace) -> int:
    from gradekit.testing.commands import new_pack

    return new_pack(args.name, args.dest, sys.stdout)


def _add_traces_command(commands: Any) -> None:
    """Add the `traces` subcommand to `commands` (argparse's subparsers)."""
    traces = commands.add_parser(
        "traces", help="the cases gradekit reads from OTLP trace files (--jsonl: dataset lines)"
    )
    traces.add_argument("files", nargs="+", metavar="FILE", help="OTLP JSON trace files")
    traces.add_argument(
        "--case-attribute",
        default=None,
        metavar="A",
        help="the span attribute naming each trace's case (default gradekit.case)",
    )
    traces.add_argument(
        "--jsonl", action="store_true", help="write each case as a dataset line (JSON) instead"
    )
    traces.set_defaults(handler=_traces)


def _traces(args: argparse.Namespace) -> int:
    """`gradekit traces FILE... [--case-attribute A] [--jsonl]`: the cases gradekit reads from
    OTLP trace files, shown as turns (input, tool calls, output) or written as dataset lines.

    What is shown is what `traces:` grades: the same reading (`gradekit.suite.traces`), the
    same dialects (`gradekit.suite.trace_dialects`) and the same transcript rules. Exit 0 when
    every line and trace was read, 1 when some could not be (each named by `file:line`), 2 when
    a file does not exist."""
    from gradekit.suite.trace_cases import trace_case
    from gradekit.suite.traces import DEFAULT_CASE_ATTRIBUTE, LineProblem, read_traces

    missing = [name for name in args.files if not os.path.isfile(name)]
    if missing:
        raise Invalid(*(f"gradekit traces: no such file: {name}" for name in missing))
    attribute = args.case_attribute or DEFAULT_CASE_ATTRIBUTE
    cases = failed = 0
    out = sys.stdout
    for item in read_traces((name, name) for name in args.files):
        if isinstance(item, LineProblem):
            failed += 1
            _problem(f"{item.where}: {item.message}", args.jsonl, out)
            continue
        name, data, problem = trace_case(item, attribute)
        if data is None:
            failed += 1
            _problem(problem or "", args.jsonl, out)
            continue
        if args.jsonl:
            out.write(json.dumps(data, ensure_ascii=False) + "\n")
            cases += 1
        elif _show(name, item.where, data, out):
            cases += 1
        else:
            failed += 1
    noun = "case" if cases == 1 else "cases"
    summary = f"{cases} {noun} read" + (f", {failed} could not be read" if failed else "")
    print(summary, file=sys.stderr if args.jsonl else out)
    return EXIT_FAILED if failed else EXIT_PASSED


def _problem(message: str, jsonl: bool, out: TextIO) -> None:
    print(f"ERROR {message}", file=sys.stderr if jsonl else out)


def _show(name: str, where: str, data: dict[str, Any], out: TextIO) -> bool:
    """Print one case's turns; False (and the problems) when the transcript rules refuse it."""
    from gradekit.report.text import one_line
    from gradekit.suite.dataset import problem_text
    from gradekit.suite.transcript import transcript_turns

    turns, problems = transcript_turns(data["messages"], ("messages",), data["messages_format"])
    trace = data["metadata"]["trace"]
    if problems:
        text = "; ".join(problem_text(problem) for problem in problems)
        _problem(f"{where}: trace {trace['id']}: {text}", False, out)
        return False
    figures = [
        f"trace {trace['id']}",
        f"model {trace['model']}",
        f"tokens {trace['input_tokens']} in / {trace['output_tokens']} out",
        "duration " + ("?" if trace["duration_ms"] is None else f"{trace['duration_ms']:.0f} ms"),
        f"error spans {trace['error_spans']}",
    ]
    out.write(f"case {name!r} ({where})\n  {', '.join(figures)}\n")
    for index, turn in enumerate(turns):
        out.write(f"  turn {index}\n")
        out.write(f"    input:  {one_line(_text(turn.input))}\n")
        for call in turn.calls:
            arguments = json.dumps(call["arguments"], ensure_ascii=False)
            shown = f"{call['name']}({arguments})"
            if "error" in call:
                shown += f" -> error: {call['error']}"
            elif "result" in call:
                shown += f" -> {_text(call['result'])}"
            out.write(f"    tool:   {one_line(shown)}\n")
        out.write(f"    output: {one_line(_text(turn.output))}\n")
    return True


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _add_compare_command(commands: Any) -> None:
    """Add the `compare` subcommand to `commands` (argparse's subparsers)."""
    compare = commands.add_parser(
        "compare", help="what changed since a baseline run; exit 1 when something regressed"
    )
    compare.add_argument("base", metavar="BASE", help="the baseline: a JSON report or results log")
    compare.add_argument("new", metavar="NEW", help="the new run: a JSON report or results log")
    for flag, what in (("--markdown", "Markdown"), ("--html", "an HTML page"), ("--json", "JSON")):
        compare.add_argument(
            flag, type=output_path, metavar="FILE", help=f"write the comparison as {what}"
        )
    compare.add_argument(
        "--tolerance",
        type=fraction,
        default=0.0,
        metavar="X",
        help="ignore score changes <= X (0 to 1)",
    )
    compare.add_argument(
        "--fail-on",
        default="regressions",
        metavar="RULES",
        help="what makes the exit code 1: regressions, new-errors, score-drop:N, "
        "significant-regression[:ALPHA] (the paired test says the pass rate fell, p < ALPHA, "
        "default 0.05); comma-separated; default regressions",
    )
    flags, options = CONFIDENCE_OPTION
    compare.add_argument(*flags, **options)
    compare.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> int:
    from gradekit.core.errors import ConfigError
    from gradekit.history import compare_views
    from gradekit.history.compare import compare, parse_fail_on
    from gradekit.report.progress import ReportsProgress

    try:
        rules = parse_fail_on(args.fail_on)
        comparison = compare(
            args.base,
            args.new,
            tolerance=args.tolerance,
            watch=ReportsProgress().reading,
            confidence=args.confidence,
        )
    except ConfigError as error:
        raise Invalid(f"gradekit: {error}") from error
    sys.stdout.write(compare_views.render_text(comparison))
    unwritten = False
    for path, writer in (
        (args.markdown, compare_views.write_compare_markdown),
        (args.html, compare_views.write_compare_html),
        (args.json, compare_views.write_compare_json),
    ):
        if path:
            try:
                writer(comparison, path)
            except OSError as error:
                print(f"gradekit: cannot write {path}: {error.strerror or error}", file=sys.stderr)
                unwritten = True
    broken = comparison.failures(rules)
    for line in broken:
        print(f"gradekit: {line}", file=sys.stderr)
    if broken:
        return EXIT_FAILED
    return EXIT_UNWRITTEN if unwritten else EXIT_PASSED
