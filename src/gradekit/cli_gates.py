"""The gates of `gradekit run`: `--min-pass-rate R` and `--max-errors N`, for CI.

Without a gate, a run exits 1 when any case failed or errored. With gates given, the gates
decide instead: exit 0 when every gate given passes (even if some case failed), 1 when one
fails, each failed gate named on stderr. Exit codes 2, 3, 129, 130 and 143 keep their meaning.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any, Final

from gradekit.cli_values import fraction, whole_number

if TYPE_CHECKING:
    import argparse

    from gradekit.report.model import Summary

__all__ = ["GATE_OPTIONS", "failed_gates", "gates_given"]


GATE_OPTIONS: Final[tuple[tuple[tuple[str, ...], dict[str, Any]], ...]] = (
    (
        ("--min-pass-rate",),
        {
            "type": fraction,
            "metavar": "R",
            "help": "gate: exit 1 when the pass rate (passed / all cases) is below R (0 to 1)",
        },
    ),
    (
        ("--max-errors",),
        {
            "type": whole_number(0),
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
