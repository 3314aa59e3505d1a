"""The gates of `gradekit run`: `--min-pass-rate R`, `--max-errors N` and, with
`--baseline`, `--fail-on RULES`, for CI; and `--confidence C`, the level of every interval
(`run` and `compare`).

Without a gate, a run exits 1 when any case failed or errored (and, with `--baseline`, when a
case regressed: the rule `regressions`, the default of `--fail-on`). With gates given, the
gates decide instead: exit 0 when every gate given passes (even if some case failed), 1 when
one fails, each failed gate named on stderr. `--fail-on significant-regression[:ALPHA]` fails
only when the paired test says the pass rate fell (p < ALPHA); given, it replaces the default
`regressions`. Exit codes 2, 3, 129, 130 and 143 keep their meaning.
"""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING, Any, Final

from gradekit.cli.values import fraction, whole_number

if TYPE_CHECKING:
    from gradekit.report.baseline import BaselineMarks
    from gradekit.report.compare import FailOn
    from gradekit.report.model import Summary

__all__ = [
    "CONFIDENCE_OPTION",
    "FAIL_ON_OPTION",
    "GATE_OPTIONS",
    "RUN_FAIL_ON_RULES",
    "baseline_failures",
    "confidence",
    "fail_on_of",
    "failed_gates",
    "gates_given",
]

RUN_FAIL_ON_RULES: Final = ("regressions", "significant-regression")
"""The `--fail-on` rules of `gradekit run --baseline` (a run's baseline keeps each case's
outcome, not its scores: `new-errors` and `score-drop` are `gradekit compare`'s)."""


def confidence(text: str) -> float:
    """An argument type for a confidence level: a number between 0 and 1, both excluded."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"expected a confidence level between 0 and 1 (exclusive), got {text!r}; "
            "0.95 gives 95% intervals"
        )
    return value


CONFIDENCE_OPTION: Final[tuple[tuple[str, ...], dict[str, Any]]] = (
    ("--confidence",),
    {
        "type": confidence,
        "default": 0.95,
        "metavar": "C",
        "help": "the level of every interval the reports show (default 0.95); the verdict "
        "of a comparison is at alpha = 1 - C",
    },
)
"""`--confidence C` of `gradekit run` and `gradekit compare`, as argparse takes it."""

FAIL_ON_OPTION: Final[tuple[tuple[str, ...], dict[str, Any]]] = (
    ("--fail-on",),
    {
        "metavar": "RULES",
        "help": "gate, with --baseline: exit 1 when a rule breaks: regressions (a case passing "
        "in the baseline does not now; the default with --baseline), "
        "significant-regression[:ALPHA] (the paired test says the pass rate fell, p < ALPHA, "
        "default 0.05); comma-separated",
    },
)
"""`--fail-on RULES` of `gradekit run`, as argparse takes it."""


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
    FAIL_ON_OPTION,
    CONFIDENCE_OPTION,
)
"""The gate options of `gradekit run` (and `--confidence`), as argparse takes them."""


def gates_given(args: argparse.Namespace) -> bool:
    """Whether any gate was given (then the gates decide the exit code)."""
    return (
        args.min_pass_rate is not None
        or args.max_errors is not None
        or getattr(args, "fail_on", None) is not None
    )


def fail_on_of(args: argparse.Namespace) -> FailOn | None:
    """The rules `--fail-on` gives `gradekit run`, checked (a ConfigError names what to fix):
    None without `--fail-on`. They need `--baseline`, and are among `RUN_FAIL_ON_RULES`."""
    from gradekit._errors import ConfigError
    from gradekit.report.compare import parse_fail_on

    text = getattr(args, "fail_on", None)
    if text is None:
        return None
    if getattr(args, "baseline", None) is None:
        raise ConfigError(
            "gradekit: --fail-on compares with a baseline run: give --baseline REPORT too "
            "(or use --min-pass-rate / --max-errors)"
        )
    try:
        rules = parse_fail_on(text)
    except ConfigError as error:
        raise ConfigError(f"gradekit: {error}") from error
    if rules.new_errors or rules.score_drop is not None:
        raise ConfigError(
            "gradekit: on run --baseline, --fail-on takes regressions and "
            "significant-regression[:ALPHA]; for new-errors and score-drop:N, use gradekit "
            "compare BASE NEW --fail-on ..."
        )
    return rules


def baseline_failures(marks: BaselineMarks | None, rules: FailOn | None, out: IO[str]) -> int:
    """How many of `rules` (None: `regressions` alone, the default) the run breaks against
    its baseline; each broken one is printed on `out` (the regressed cases named, for
    `regressions`)."""
    from gradekit.cli.baseline import regressions
    from gradekit.report.compare import FailOn, significant_regression

    if marks is None:
        return 0
    if rules is None:
        rules = FailOn()
    failed = 0
    if rules.regressions and regressions(marks, out):
        failed += 1
    if rules.significant_regression is not None:
        found = significant_regression(marks.statistics, rules.significant_regression)
        if found is not None:
            print(f"gradekit: gate --fail-on significant-regression failed: {found}", file=out)
            failed += 1
    return failed


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
