"""A run's cases marked against a baseline, as the report model carries them and the writers
show them: `Marks`, the protocol of what the model and the writers read of the marks
(`gradekit.history.baseline.BaselineMarks` is the one implementation: this package never
imports `gradekit.history`), and their views: the cases of each mark by name, what got worse
first (`regressed`, then `fixed`, `new` and the baseline's cases the run no longer has), in the
Markdown summary and in the HTML report (the console's lines: `console.print_baseline`).

Imports no other gradekit module: the model, which names `Marks` in its annotations, is named
here by shape (`MarkedCase`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from html import escape
from typing import Any, Protocol

__all__ = [
    "MarkedCase",
    "Marks",
    "baseline_counts",
    "listed",
    "markdown_section",
]


class MarkedCase(Protocol):
    """What the marks read of a case: a `gradekit.report.model.CaseReport`."""

    @property
    def name(self) -> str:
        """The case's name."""

    @property
    def attempt(self) -> int | None:
        """Its attempt index, for one of several attempts."""

    @property
    def outcome(self) -> str:
        """`pass`, `fail` or `error`."""

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form."""


class Marks(Protocol):
    """How a run compares with its baseline, as `SuiteReport.baseline` holds it: the counts of
    each mark (`new`, `fixed`, `regressed`, `unchanged`), the names of the cases of each (the
    first ones, in suite order), the baseline's cases the run does not have (`removed`), and
    the mark of any case of the run."""

    @property
    def source(self) -> str:
        """The file the baseline was read from (`""` for report objects)."""

    @property
    def counts(self) -> Mapping[str, int]:
        """How many cases of the run got each mark."""

    @property
    def names(self) -> Mapping[str, tuple[str, ...]]:
        """The names of the cases of each mark (the first ones, in suite order)."""

    @property
    def removed(self) -> int:
        """How many cases of the baseline the run does not have."""

    @property
    def removed_names(self) -> tuple[str, ...]:
        """Their names (the first ones)."""

    @property
    def still_failing(self) -> int:
        """Among `unchanged`, the cases that did not pass either time."""

    @property
    def regressed(self) -> int:
        """How many cases regressed."""

    @property
    def verdict(self) -> str | None:
        """The paired comparison in one line; None when not computed."""

    def mark(self, case: MarkedCase) -> str:
        """The mark of a case of the run."""

    def mark_text(self, text: str, mark: str | None = None) -> str:
        """A case's JSON text with its mark added as the key `baseline` (`mark`: when known)."""

    def marked(self, case: MarkedCase) -> dict[str, Any]:
        """A case's JSON form with its mark, the key `baseline`."""

    def summary(self) -> dict[str, Any]:
        """What the marks add to the JSON report's `summary`: its `baseline`."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's `summary.baseline`."""


_LISTED = (
    ("regressed", "passing in the baseline, not now"),
    ("fixed", "not passing in the baseline, passing now"),
    ("new", "not in the baseline"),
)


def listed(marks: Marks) -> Iterator[tuple[str, str, int, tuple[str, ...]]]:
    """(mark, what it means, count, the names kept) of each mark the reports list, what got
    worse first (`regressed`, `fixed`, `new`), then the same of the removed cases."""
    for mark, meaning in _LISTED:
        yield mark, meaning, marks.counts[mark], marks.names[mark]
    yield "removed", "in the baseline, not in this run", marks.removed, marks.removed_names


def markdown_section(marks: Marks, cell: Callable[[str], str], *, limit: int = 50) -> list[str]:
    """The Markdown summary's lines: a table of the counts, then the cases of each mark
    (regressed first), each name written by `cell` (escaped for Markdown)."""
    counts = marks.counts
    source = marks.source
    lines = [
        "### Compared with the baseline" + (f" {cell(source)}" if source else ""),
        "",
        "| Regressed | Fixed | New | Unchanged | Still failing | Removed |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {counts['regressed']} | {counts['fixed']} | {counts['new']} | "
        f"{counts['unchanged']} | {marks.still_failing} | {marks.removed} |",
        "",
    ]
    line = marks.verdict
    if line is not None:
        lines += [f"**{line}**", ""]
    for mark, meaning, count, names in listed(marks):
        if not count:
            continue
        lines += [f"**{mark.capitalize()} ({count})**: {meaning}", ""]
        lines += [f"- {cell(name)}" for name in names[:limit]]
        shown = min(limit, len(names))  # at most the names kept
        if count > shown:
            lines.append(f"- … and {count - shown} more")
        lines.append("")
    return lines


def baseline_counts(marks: Marks, link: Callable[[dict[str, str], str], str]) -> str:
    """The summary's row of counts against the baseline; `link(state, text)`: a link to the
    viewer in that state."""
    source = marks.source
    named = f" <code>{escape(source)}</code>" if source else ""
    parts = [f'<div class="counts" id="baseline-counts"><div class="count">against{named}</div>']
    for mark in ("regressed", "fixed", "new", "unchanged"):
        count = link({"baseline": mark}, f"{marks.counts[mark]:,}")
        parts.append(f'<div class="count mark-{mark}" id="count-{mark}">{count} {mark}</div>')
    parts.append(f'<div class="count" id="count-removed"><b>{marks.removed:,}</b> removed</div>')
    parts.append("</div>\n")
    line = marks.verdict
    if line is not None:
        parts.append(f'<p class="verdict" id="baseline-verdict">{escape(line)}</p>\n')
    return "".join(parts)
