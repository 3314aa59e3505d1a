"""What every command of `gradekit` shares: the argument types, the exit codes and `Invalid`;
and the options of `gradekit run` that choose what is graded and shown: the output paths
checked against each other, the case selection and the k of pass@k.

The argument types turn one command-line text into a value or an `argparse.ArgumentTypeError`
that says what to give instead, so every option of a kind reads and fails the same way.

`--filter GLOB`, `--select EXPR` and `--rerun-failed REPORT` combine with "and" into one
`Selection` (None: every case). A selection expression that cannot be read, or a report that
cannot be read, is an invalid command line (exit 2, nothing graded); a selection that matches
no case is one too (the run raises SelectionError). A malformed `--k` is an invalid command
line too; a `--k` no case has enough attempts for is shown as a note beside the summary
(docs/reports.md, "Many attempts and pass@k"). Output paths are checked against the inputs
and against each other before anything is graded: a report written over the suite, its
dataset, the `--resume` log or another report would lose that file.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from gradekit.core.values import fraction_problem

if TYPE_CHECKING:
    from gradekit.report.model import SuiteReport
    from gradekit.suite.selection import Selection

__all__ = [
    "ATTEMPT_OPTIONS",
    "EXIT_FAILED",
    "EXIT_INVALID",
    "EXIT_PASSED",
    "EXIT_UNWRITTEN",
    "SELECT_OPTIONS",
    "Invalid",
    "Option",
    "fraction",
    "input_path",
    "k_note",
    "output_path",
    "parse_ks",
    "path_clash",
    "positive_seconds",
    "selection_of",
    "whole_number",
]

EXIT_PASSED: Final = 0
EXIT_FAILED: Final = 1
EXIT_INVALID: Final = 2
EXIT_UNWRITTEN: Final = 3
"""A report or the results log could not be written (every other report was)."""

Option = tuple[tuple[str, ...], dict[str, Any]]
"""One option as argparse takes it: its flags, and the keyword arguments of `add_argument`."""


class Invalid(Exception):
    """The suite or the command line cannot be used: `main` prints the lines and exits 2."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argument type for whole numbers of at least `minimum`."""
    bound = "must be 0 or more" if minimum == 0 else f"must be at least {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{bound}, got {value}")
        return value

    return parse


def fraction(text: str) -> float:
    """An argument type for a number from 0 to 1 (a rate: 0.9 is 90%)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    problem = fraction_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem} (0.9 is 90%)")
    return value


def output_path(text: str) -> str:
    """An argument type for the path of a file to write (a report, the results log): not empty
    (argparse would take `--html ''` as no report at all) and not `-` (which reads as standard
    output but would be a file named `-`: reports are written to files only)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file; give the path of a file")
    if text == "-":
        raise argparse.ArgumentTypeError(
            "'-' is not standard output here: reports are written to files only; give the "
            "path of a file (./- for a file named -)"
        )
    return text


def input_path(text: str) -> str:
    """An argument type for the path of a file to read (`--baseline`, `--rerun-failed`): not
    empty (which would read as the current folder)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file; give the path of a file")
    return text


def positive_seconds(text: str) -> float:
    """An argument type for a duration in seconds (greater than 0, finite)."""
    from gradekit.core.values import seconds_problem

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    problem = seconds_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def _file(path: str) -> str:
    """The file `path` names, whatever the spelling (`./a/../b`, a symlink)."""
    return os.path.realpath(path)


def path_clash(
    outputs: Sequence[tuple[str, str]], inputs: Sequence[tuple[str, str | None]]
) -> str | None:
    """What is wrong when an output (flag, path) names an input (what it is, path) or the
    same file as an earlier output; None when every output has a file of its own."""
    read = {_file(path): what for what, path in inputs if path}
    written: dict[str, tuple[str, str]] = {}
    for flag, path in outputs:
        file = _file(path)
        if file in read:
            return (
                f"{flag} {path} is {read[file]}; the report would overwrite it, give it "
                "another path"
            )
        if file in written:
            first_flag, first_path = written[file]
            return f"{first_flag} {first_path} and {flag} {path} are one file; give each its own"
        written[file] = (flag, path)
    return None


SELECT_OPTIONS: Final[tuple[Option, ...]] = (
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
    from gradekit.core.errors import ConfigError
    from gradekit.suite.selection import Selection

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
    from gradekit.core.errors import ConfigError
    from gradekit.history.case_scores import read_outcomes
    from gradekit.report.progress import ReportsProgress
    from gradekit.suite.selection import Selection

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


ATTEMPT_OPTIONS: Final[tuple[Option, ...]] = (
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
