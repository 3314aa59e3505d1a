"""GitHub Actions workflow commands for the cases that did not pass: one `::error` line each,
pointing at the case in the suite file (or its dataset line), and one `::notice` of the run.

GitHub reads these lines from a step's standard output and shows each `::error` on the pull
request's files and the run's page (at most 10 errors a step). The data after `::` escapes
`%`, `\\r` and `\\n`; the properties (`file`, `line`, `col`, `title`) escape `:` and `,` too,
as GitHub's own toolkit does (@actions/core, `command.ts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

import attrs

from gradekit.report.attempts import case_label
from gradekit.report.model import CaseReport, SuiteReport, failing_lines
from gradekit.report.text import escaped

__all__ = [
    "MAX_ANNOTATIONS",
    "Place",
    "command",
    "error_commands",
    "escape_data",
    "escape_property",
]

MAX_ANNOTATIONS: Final = 50
"""At most this many `::error` lines a run; the notice counts the rest."""

MAX_MESSAGE: Final = 4000
"""At most this many characters of each annotation's message."""


def escape_data(text: str) -> str:
    """The message of a workflow command: `%`, CR and LF as `%25`, `%0D`, `%0A`."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value of a workflow command: as `escape_data`, and `:` / `,` as `%3A` /
    `%2C` (they would end the value)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """`::name key=value,...::message`, every part escaped; properties that are None left out."""
    given = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{name}{' ' + given if given else ''}::{escape_data(message)}"


@attrs.frozen
class Place:
    """Where a case is written: a file (as GitHub names it, from the repository's root), and
    the line and column when known."""

    file: str
    line: int | None = None
    col: int | None = None


_WORD = {"fail": "failed", "error": "errored"}


def error_commands(
    report: SuiteReport,
    failing: Iterable[CaseReport],
    places: dict[tuple[str, int | None], Place],
    *,
    limit: int = MAX_ANNOTATIONS,
) -> Iterator[str]:
    """The `::error` line of each of the first `limit` cases of `failing` (the cases that did
    not pass, in suite order), at its place in `places` (by case name and attempt index)
    when known; then one
    `::notice` with the run's counts, the regressions and how many were not annotated."""
    marks = report.baseline
    shown = 0
    for case in failing:
        if shown == limit:
            break
        shown += 1
        mark = "" if marks is None else marks.mark(case)
        said = f" ({mark})" if mark in ("regressed", "new") else ""
        where = places.get((case.name, case.attempt))
        message = "\n".join(failing_lines(case)) or _WORD[case.outcome]
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 1] + "…"
        yield command(
            "error",
            message,
            file=where.file if where else None,
            line=where.line if where else None,
            col=where.col if where else None,
            title=f"gradekit: {escaped(case_label(case.name, case.attempt))} "
            f"{_WORD[case.outcome]}{said}",
        )
    summary = report.summary
    not_passed = summary.failed + summary.errored
    if not not_passed and (marks is None or not marks.regressed):
        return
    text = (
        f"{not_passed} of {summary.cases} cases did not pass ({summary.failed} failed, "
        f"{summary.errored} errored)"
    )
    if marks is not None:
        source = escaped(marks.source or "the baseline")
        text += f"; {marks.regressed} regressed against {source}"
    if not_passed > shown:
        text += f"; {not_passed - shown} not annotated here (see the reports)"
    yield command("notice", text, title=f"gradekit: {escaped(report.suite)}")
