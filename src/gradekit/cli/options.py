"""Which cases `gradekit run` grades: `--filter GLOB`, `--select EXPR`, `--rerun-failed REPORT`,
combined with "and" into one `Selection` (None: every case).

A selection expression that cannot be read, or a report that cannot be read, is an invalid
command line (exit 2, nothing graded); a selection that matches no case is one too (the run
raises SelectionError).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Final

from gradekit.cli.values import input_path

if TYPE_CHECKING:
    from gradekit.run.selection import Selection

__all__ = ["SELECT_OPTIONS", "selection_of"]

SELECT_OPTIONS: Final[tuple[tuple[tuple[str, ...], dict[str, Any]], ...]] = (
    (
        ("--filter",),
        {
            "action": "append",
            "metavar": "GLOB",
            "default": [],
            "help": "grade only cases whose name matches GLOB (repeat for several)",
        },
    ),
    (
        ("--select",),
        {
            "metavar": "EXPR",
            "help": "grade only the cases EXPR picks: tag:NAME, grader:KIND, name globs, with "
            "not / and / or and parentheses (e.g. 'tag:smoke and not tag:slow')",
        },
    ),
    (
        ("--rerun-failed",),
        {
            "type": input_path,
            "metavar": "REPORT",
            "help": "grade only the cases that failed or errored in REPORT (a JSON report or a "
            "--resume log), by name",
        },
    ),
)
"""The selection options of `gradekit run`, as argparse takes them."""


def selection_of(args: argparse.Namespace) -> Selection | None:
    """The cases the options pick (every option given must pick a case), None for every case;
    ConfigError, its message the line to print (exit 2), when an expression or a report cannot
    be read."""
    from gradekit._errors import ConfigError
    from gradekit.run.selection import Selection

    parts: list[Selection] = []
    if args.filter:
        said = "--filter " + " or ".join(repr(p) for p in args.filter)
        parts.append(Selection.names(*args.filter, description=said))
    if args.select is not None:
        try:
            parts.append(Selection.expression(args.select, description=f"--select {args.select!r}"))
        except ConfigError as error:
            raise ConfigError(f"gradekit: --select: {error}; nothing was graded") from error
    if args.rerun_failed is not None:
        parts.append(_failed_in(args.rerun_failed, quiet=args.quiet))
    if not parts:
        return None
    selection = parts[0]
    for part in parts[1:]:
        selection &= part
    return selection


def _failed_in(path: str, *, quiet: bool) -> Selection:
    """The cases that failed or errored in the report or results log at `path` (its reading
    shown on stderr when it lasts, unless `quiet`)."""
    from gradekit._errors import ConfigError
    from gradekit.report.progress import ReportsProgress
    from gradekit.report.reading import read_outcomes
    from gradekit.run.selection import Selection

    # By name and attempt index: only the attempts of a case that failed are graded again.
    try:
        watch = None if quiet else ReportsProgress().reading
        failed = (key for key, outcome in read_outcomes(path, watch) if outcome != "pass")
        names = frozenset(failed)
    except ConfigError as error:
        raise ConfigError(f"gradekit: --rerun-failed: {error}; nothing was graded") from error
    count = len(names)
    said = f"--rerun-failed {path!r} ({count} case{'s' if count != 1 else ''} failed or errored)"
    hint = (
        "every case of that report passed: there is nothing to grade again"
        if not names
        else "check that the report is of this suite (cases are matched by name and attempt)"
    )
    return Selection(lambda case: (case.name, case.attempt) in names, said, hint)
