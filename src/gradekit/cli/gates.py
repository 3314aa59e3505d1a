"""The gates of `gradekit run`: `--min-pass-rate R`, `--max-errors N` and, with
`--baseline`, `--fail-on RULES`, for CI; `--confidence C`, the level of every interval
(`run` and `compare`); the baseline run compared with; and GitHub's annotations.

Without a gate, a run exits 1 when any case failed or errored (and, with `--baseline`, when a
case regressed: the rule `regressions`, the default of `--fail-on`). With gates given, the
gates decide instead: exit 0 when every gate given passes (even if some case failed), 1 when
one fails, each failed gate named on stderr. `--fail-on significant-regression[:ALPHA]` fails
only when the paired test says the pass rate fell (p < ALPHA); given, it replaces the default
`regressions`. Exit codes 2, 3, 129, 130 and 143 keep their meaning.

`--baseline BASE`: BASE is a JSON report (`gradekit run -o`) or a results log (`--resume`),
read before anything is graded (one that cannot be read exits 2). Every report then marks each
case `new`, `fixed`, `regressed` or `unchanged` (`gradekit.history.baseline`) and gives the
paired statistics, and a case that regressed fails the run (exit 1) even when the gates
`--min-pass-rate` / `--max-errors` pass: the default rule of `--fail-on`, which
`--fail-on significant-regression` replaces.

In GitHub Actions (`GITHUB_ACTIONS=true` in the environment, which GitHub sets in every job),
or with `--annotations github`, each case that did not pass prints a
`::error file=...,line=...::` workflow command on stdout, pointing at the case in the suite
file (or its dataset line), at most `MAX_ANNOTATIONS`, then one `::notice` of the run; and
when `GITHUB_STEP_SUMMARY` names a file, the Markdown report (the `--markdown` writer, under
its 1 MB bound) is appended to it. `--annotations none` turns both off.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Final

from gradekit.cli.options import Option, fraction, input_path, whole_number

if TYPE_CHECKING:
    from gradekit.core.errors import WriteError
    from gradekit.history.baseline import Baseline
    from gradekit.history.compare import FailOn
    from gradekit.report.github import Place
    from gradekit.report.marks import Marks
    from gradekit.report.model import CaseReport, SuiteReport, Summary
    from gradekit.suite.model import Suite

__all__ = [
    "ANNOTATION_OPTIONS",
    "BASELINE_OPTIONS",
    "CONFIDENCE_OPTION",
    "FAIL_ON_OPTION",
    "GATE_OPTIONS",
    "RUN_FAIL_ON_RULES",
    "baseline_failures",
    "baseline_of",
    "confidence",
    "fail_on_of",
    "failed_gates",
    "gates_given",
    "github_wanted",
    "regressions",
    "report_to_github",
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


CONFIDENCE_OPTION: Final[Option] = (
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

FAIL_ON_OPTION: Final[Option] = (
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


GATE_OPTIONS: Final[tuple[Option, ...]] = (
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
    from gradekit.core.errors import ConfigError
    from gradekit.history.compare import parse_fail_on

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


def baseline_failures(marks: Marks | None, rules: FailOn | None, out: IO[str]) -> int:
    """How many of `rules` (None: `regressions` alone, the default) the run breaks against
    its baseline; each broken one is printed on `out` (the regressed cases named, for
    `regressions`)."""
    from gradekit.history.baseline import BaselineMarks
    from gradekit.history.compare import FailOn, significant_regression

    if marks is None:
        return 0
    assert isinstance(marks, BaselineMarks)  # what run_suite(baseline=...) marks a run with
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


BASELINE_OPTIONS: Final[tuple[Option, ...]] = (
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
    from gradekit.history.baseline import Baseline
    from gradekit.report.progress import ReportsProgress

    watch = None if args.quiet else ReportsProgress().reading
    return Baseline.load(args.baseline, watch)


def regressions(marks: Marks | None, out: IO[str]) -> int:
    """How many cases regressed against the baseline; when any did, a line on `out` says so,
    naming the first of them."""
    from gradekit.report.text import escaped

    if marks is None or not marks.regressed:
        return 0
    count = marks.regressed
    names = ", ".join(escaped(name) for name in marks.names["regressed"][:NAMED])
    more = f" and {count - NAMED} more" if count > NAMED else ""
    noun = "case" if count == 1 else "cases"
    source = escaped(marks.source or "the baseline")
    print(f"gradekit: {count} {noun} regressed against {source}: {names}{more}", file=out)
    return count


ANNOTATION_OPTIONS: Final[tuple[Option, ...]] = (
    (
        ("--annotations",),
        {
            "choices": ("github", "none"),
            "help": "github: print a GitHub Actions ::error line for each case that did not "
            "pass and append the Markdown summary to $GITHUB_STEP_SUMMARY (the default when "
            "GITHUB_ACTIONS=true); none: neither",
        },
    ),
)
"""The annotation option of `gradekit run`, as argparse takes it."""

_YAML_PLACE = re.compile(r":(\d+):(\d+)")
_LINE_PLACE = re.compile(r"(.*):(\d+)")


def github_wanted(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the run reports to GitHub: `--annotations github`, or GitHub Actions' own
    `GITHUB_ACTIONS=true` unless `--annotations none`."""
    if args.annotations is not None:
        return bool(args.annotations == "github")
    return environ.get("GITHUB_ACTIONS") == "true"


def report_to_github(
    report: SuiteReport,
    suite: Suite,
    *,
    failing: Iterable[CaseReport],
    cases: Iterable[CaseReport],
    out: IO[str],
    environ: Mapping[str, str] = os.environ,
) -> list[WriteError]:
    """Print the annotations of `failing` (the cases that did not pass, in suite order) on
    `out`; append the Markdown summary of `cases` (every case) to $GITHUB_STEP_SUMMARY when it
    is set. The summary file's write failure, if any (printed on stderr)."""
    import itertools

    from gradekit.report.github import MAX_ANNOTATIONS, error_commands

    shown = list(itertools.islice(failing, MAX_ANNOTATIONS))
    root = environ.get("GITHUB_WORKSPACE") or os.getcwd()
    places = places_of(suite, {(case.name, case.attempt) for case in shown}, root)
    for line in error_commands(report, shown, places):
        print(line, file=out)
    out.flush()
    summary = environ.get("GITHUB_STEP_SUMMARY")
    if not summary:
        return []
    return _append_summary(report, cases, summary)


def _append_summary(
    report: SuiteReport, cases: Iterable[CaseReport], path: str
) -> list[WriteError]:
    from gradekit.core.errors import WriteError
    from gradekit.report.markdown import render_markdown

    # A block of its own, whatever is before and after it: a blank line before (an HTML block
    # the file ends in, such as an earlier run's `</details>`, would take in our heading) and
    # one after (ours would take in the next step's).
    text = render_markdown(report, cases).rstrip("\n") + "\n\n"
    try:
        with open(path, "a+b") as file:
            file.write((_separator(file) + text).encode())
    except OSError as error:
        failure = WriteError(path, error.strerror or str(error), "check GITHUB_STEP_SUMMARY")
        print(f"gradekit: {failure}", file=sys.stderr)
        return [failure]
    return []


def _separator(file: IO[bytes]) -> str:
    """What makes a blank line after the end of `file` (open for appending): nothing for an
    empty file or one that ends in a blank line."""
    size = file.seek(0, os.SEEK_END)
    if size == 0:
        return ""
    file.seek(max(0, size - 2))
    tail = file.read()
    if tail == b"\n\n" or (size == 1 and tail == b"\n"):
        return ""
    return "\n" if tail.endswith(b"\n") else "\n\n"


def places_of(
    suite: Suite, keys: set[tuple[str, int | None]], root: str
) -> dict[tuple[str, int | None], Place]:
    """Where each case of `keys` (its name and attempt index, None for a case of one attempt)
    is written, by that key, as GitHub names files (relative to `root`, the repository's
    folder): each attempt at its own line. The suite's cases are read again until all are
    found: a case keeps its place (`Case.location`), the report does not."""
    found: dict[tuple[str, int | None], Place] = {}
    if not keys:
        return found
    for case in suite.cases():
        key = (case.name, case.attempt)
        if key in keys and key not in found:
            place = _place(suite, case.location, root)
            if place is not None:
                found[key] = place
            if len(found) == len(keys):
                break
    return found


def _place(suite: Suite, location: str | None, root: str) -> Place | None:
    """`suite.yaml:12:7` (a case of the suite file) or `data.jsonl:40` (a dataset line, its
    path relative to the suite's folder) as a Place."""
    from gradekit.report.github import Place

    if location is None or suite.path is None:
        return None
    source = suite.path
    rest = location[len(source) :] if location.startswith(source) else None
    yaml = _YAML_PLACE.fullmatch(rest) if rest is not None else None
    if yaml is not None:
        return Place(_relative(source, root), int(yaml[1]), int(yaml[2]))
    folder = os.path.dirname(os.path.abspath(source))
    dataset = _LINE_PLACE.fullmatch(location)
    if dataset is not None:
        return Place(_relative(os.path.join(folder, dataset[1]), root), int(dataset[2]))
    return Place(_relative(os.path.join(folder, location), root))


def _relative(path: str, root: str) -> str:
    """`path` relative to `root` when inside it (GitHub's form), else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, os.path.abspath(root))
    return absolute if relative.startswith("..") else relative.replace(os.sep, "/")
