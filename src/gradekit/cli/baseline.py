"""`gradekit run --baseline BASE`: the run compared with a baseline run as it is reported.

BASE is a JSON report (`gradekit run -o`) or a results log (`--resume`), read before anything
is graded (one that cannot be read exits 2). Every report then marks each case `new`, `fixed`,
`regressed` or `unchanged` (`gradekit.report.baseline`) and gives the paired statistics, and a
case that regressed fails the run (exit 1) even when the gates `--min-pass-rate` /
`--max-errors` pass: the default rule of `--fail-on` (`gradekit.cli.gates`), which
`--fail-on significant-regression` replaces.
"""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING, Any, Final

from gradekit.cli.values import input_path

if TYPE_CHECKING:
    from gradekit.report.baseline import Baseline, BaselineMarks

__all__ = ["BASELINE_OPTIONS", "baseline_of", "regressions"]

BASELINE_OPTIONS: Final[tuple[tuple[tuple[str, ...], dict[str, Any]], ...]] = (
    (
        ("--baseline",),
        {
            "type": input_path,
            "metavar": "BASE",
            "help": "compare with BASE, a JSON report or a --resume log of an earlier run: every "
            "report marks each case new, fixed, regressed or unchanged; exit 1 when a case "
            "regressed, even if the gates pass (--fail-on chooses other rules)",
        },
    ),
)
"""The baseline option of `gradekit run`, as argparse takes it."""

NAMED: Final = 10
"""At most this many regressed cases are named in the line on stderr."""


def baseline_of(args: argparse.Namespace) -> Baseline | None:
    """The baseline `--baseline` names, read; None without one. A file that is not a report
    raises ConfigError naming it."""
    if args.baseline is None:
        return None
    from gradekit.report.baseline import Baseline
    from gradekit.report.progress import ReportsProgress

    watch = None if args.quiet else ReportsProgress().reading
    return Baseline.load(args.baseline, watch)


def regressions(marks: BaselineMarks | None, out: IO[str]) -> int:
    """How many cases regressed against the baseline; when any did, a line on `out` says so,
    naming the first of them."""
    from gradekit.report._escaped import escaped

    if marks is None or not marks.regressed:
        return 0
    count = marks.regressed
    names = ", ".join(escaped(name) for name in marks.names["regressed"][:NAMED])
    more = f" and {count - NAMED} more" if count > NAMED else ""
    noun = "case" if count == 1 else "cases"
    source = escaped(marks.baseline.source or "the baseline")
    print(f"gradekit: {count} {noun} regressed against {source}: {names}{more}", file=out)
    return count
