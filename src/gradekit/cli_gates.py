"""The gates of `gradekit run`: `--min-pass-rate R` and `--max-errors N`, for CI.

Without a gate, a run exits 1 when any case failed or errored. With gates given, the gates
decide instead: exit 0 when every gate given passes (even if some case failed), 1 when one
fails, each failed gate named on stderr. Exit codes 2, 3, 130 and 143 keep their meaning.
"""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from gradekit.report.model import Summary

__all__ = ["GATE_OPTIONS", "failed_gates", "gates_given"]


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be from 0 to 1 (0.9 is 90%), got {text}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


GATE_OPTIONS: Final[tuple[tuple[tuple[str, ...], dict[str, Any]], ...]] = (
    (
        ("--min-pass-rate",),
        {
            "type": _rate,
            "metavar": "R",
            "help": "gate: exit 1 when the pass rate (passed / all cases) is below R (0 to 1)",
        },
    ),
    (
        ("--max-errors",),
        {
            "type": _count,
            "metavar": "N",
            "help": "gate: exit 1 when more than N cases errored",
        },
    ),
)
"""The gate options of `gradekit run`, as argparse takes them."""


def gates_given(args: argparse.Namespace) -> bool:
    """Whether any gate was given (then the gates decide the exit code)."""
    return args.min_pass_rate is not None or args.max_errors is not None


def failed_gates(args: argparse.Namespace, summary: Summary, out: IO[str]) -> int:
    """How many of the gates given fail on `summary`; each failed one is printed on `out`."""
    failed = 0
    if args.min_pass_rate is not None:
        rate = summary.pass_rate or 0.0
        if rate < args.min_pass_rate:
            failed += 1
            print(
                f"gradekit: gate --min-pass-rate {args.min_pass_rate:g} failed: the pass rate "
                f"is {rate:.4g} ({summary.passed} of {summary.cases} cases passed)",
                file=out,
            )
    if args.max_errors is not None and summary.errored > args.max_errors:
        failed += 1
        noun = "case" if summary.errored == 1 else "cases"
        print(
            f"gradekit: gate --max-errors {args.max_errors} failed: {summary.errored} {noun} "
            "errored",
            file=out,
        )
    return failed
