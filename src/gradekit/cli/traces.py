"""`gradekit traces FILE... [--case-attribute A] [--jsonl]`: the cases gradekit reads from OTLP
trace files, shown as turns (input, tool calls, output) or written as dataset lines.

What is shown is what `traces:` grades: the same reading (`gradekit.suite.traces`), the same
dialects (`gradekit.suite.trace_dialects`) and the same transcript rules. Exit 0 when every
line and trace was read, 1 when some could not be (each named by `file:line`), 2 when a file
does not exist.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

from gradekit.cli.run import EXIT_FAILED, EXIT_PASSED, Invalid

__all__ = ["add_traces_command"]


def add_traces_command(commands: Any) -> None:
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
    from gradekit.report._text import one_line
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
