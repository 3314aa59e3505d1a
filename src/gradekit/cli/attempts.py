"""`gradekit run --k 1,5,10`: at which k the reports give pass@k and pass^k of the cases that
carry several attempts (docs/reports.md, "Many attempts and pass@k").

A malformed `--k` is an invalid command line (exit 2, nothing graded); a `--k` no case has
enough attempts for is shown as a note beside the summary.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from gradekit.report.model import SuiteReport

__all__ = ["ATTEMPT_OPTIONS", "k_note", "parse_ks"]


def parse_ks(text: str) -> tuple[int, ...]:
    """`1,5,10` to (1, 5, 10): whole numbers >= 1, separated by commas; an
    argparse.ArgumentTypeError saying what to write otherwise."""
    parts = [part.strip() for part in text.split(",")]
    found = []
    for part in parts:
        if not part.isdigit() or int(part) < 1:
            raise argparse.ArgumentTypeError(
                f"expected whole numbers >= 1 separated by commas (such as 1,5,10), got "
                f"{part!r} in {text!r}"
            )
        found.append(int(part))
    return tuple(sorted(set(found)))


ATTEMPT_OPTIONS: Final[tuple[tuple[tuple[str, ...], dict[str, Any]], ...]] = (
    (
        ("--k",),
        {
            "type": parse_ks,
            "metavar": "K,...",
            "help": "for cases with several attempts, the k at which the reports give pass@k "
            "and pass^k (default: each of 1, 5 and 10 up to the most attempts a case has, "
            "and that number)",
        },
    ),
)
"""The pass@k option of `gradekit run`, as argparse takes it."""


def k_note(report: SuiteReport, ks: tuple[int, ...] | None) -> str | None:
    """What to tell about `--k` when the run has no case of several attempts to show it for."""
    if ks is None or report.summary.pass_at_k is not None:
        return None
    return (
        "gradekit: --k: no case of this run has several attempts, so no pass@k is shown; give "
        "a case `attempts:` (or dataset lines an `attempt` index)"
    )
