"""`gradekit compare BASE NEW`: what changed since a baseline run; exit 1 when a rule is broken.

The comparison is `gradekit.history.compare`; this module only parses its options, prints the
text view, writes the files asked for and turns `--fail-on` into the exit code.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gradekit.cli.gates import CONFIDENCE_OPTION
from gradekit.cli.options import (
    EXIT_FAILED,
    EXIT_PASSED,
    EXIT_UNWRITTEN,
    Invalid,
    fraction,
    output_path,
)

__all__ = ["add_compare_command"]


def add_compare_command(commands: Any) -> None:
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
