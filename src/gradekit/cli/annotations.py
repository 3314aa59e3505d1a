"""`gradekit run` in GitHub Actions: annotations of the cases that did not pass, and the
Markdown summary on the run's page.

With `GITHUB_ACTIONS=true` in the environment (GitHub sets it in every job), or with
`--annotations github`, each case that did not pass prints a `::error file=...,line=...::`
workflow command on stdout, pointing at the case in the suite file (or its dataset line), at
most `MAX_ANNOTATIONS`, then one `::notice` of the run; and when `GITHUB_STEP_SUMMARY` names a
file, the Markdown report (the `--markdown` writer, under its 1 MB bound) is appended to it.
`--annotations none` turns both off.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from gradekit._errors import WriteError
    from gradekit.report.github import Place
    from gradekit.report.model import CaseReport, SuiteReport
    from gradekit.suite.model import Suite

__all__ = ["ANNOTATION_OPTIONS", "github_wanted", "report_to_github"]

ANNOTATION_OPTIONS: Final[tuple[tuple[tuple[str, ...], dict[str, Any]], ...]] = (
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
    places = places_of(suite, {case.name for case in shown}, root)
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
    from gradekit._errors import WriteError
    from gradekit.report.markdown import render_markdown

    text = render_markdown(report, cases)
    try:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text if text.endswith("\n") else text + "\n")
    except OSError as error:
        failure = WriteError(path, error.strerror or str(error), "check GITHUB_STEP_SUMMARY")
        print(f"gradekit: {failure}", file=sys.stderr)
        return [failure]
    return []


def places_of(suite: Suite, names: set[str], root: str) -> dict[str, Place]:
    """Where each case named in `names` is written, by name, as GitHub names files (relative
    to `root`, the repository's folder). The suite's cases are read again until all are found:
    a case keeps its place (`Case.location`), the report does not."""
    found: dict[str, Place] = {}
    if not names:
        return found
    for case in suite.cases():
        if case.name in names and case.name not in found:
            place = _place(suite, case.location, root)
            if place is not None:
                found[case.name] = place
            if len(found) == len(names):
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
