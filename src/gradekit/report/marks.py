"""The baseline marks of a run as the console and the Markdown summary show them: a line of
counts, then the cases of each mark by name, what got worse first (`regressed`, then `fixed`,
`new` and the baseline's cases the run no longer has)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TextIO

from gradekit.report._escaped import escaped
from gradekit.report.text import verdict_line
from gradekit.history.baseline import MAX_NAMED, BaselineMarks

__all__ = ["counts_line", "markdown_section", "print_baseline", "statistics_line"]

_LISTED = (
    ("regressed", "passing in the baseline, not now"),
    ("fixed", "not passing in the baseline, passing now"),
    ("new", "not in the baseline"),
)


def counts_line(marks: BaselineMarks) -> str:
    """`1 regressed, 1 fixed, 2 new, 3 unchanged (1 still failing), 1 removed`."""
    counts = marks.counts
    still = f" ({marks.still_failing} still failing)" if marks.still_failing else ""
    return (
        f"{counts['regressed']} regressed, {counts['fixed']} fixed, {counts['new']} new, "
        f"{counts['unchanged']} unchanged{still}, {marks.removed} removed"
    )


def statistics_line(marks: BaselineMarks) -> str | None:
    """The paired comparison in one line (`gradekit.report.text.verdict_line`); None when
    the marks carry no statistics."""
    if marks.statistics is None:
        return None
    all_paired = not marks.counts["new"] and not marks.removed
    return verdict_line(
        marks.base_pass_rate, marks.new_pass_rate, marks.statistics, all_paired=all_paired
    )


def _groups(marks: BaselineMarks) -> Iterator[tuple[str, str, int, tuple[str, ...]]]:
    """(mark, what it means, count, the names kept) of each mark listed, then the same of
    the removed cases."""
    for mark, meaning in _LISTED:
        yield mark, meaning, marks.counts[mark], marks.names[mark]  # type: ignore[index]
    yield "removed", "in the baseline, not in this run", marks.removed, marks.removed_names


def print_baseline(marks: BaselineMarks, stream: TextIO, *, limit: int = 20) -> None:
    """The console's lines: the counts, then the cases regressed, fixed, new and removed
    (the first `limit` of each)."""
    source = escaped(marks.baseline.source or "the baseline")
    stream.write(f"\ncompared with {source}: {counts_line(marks)}\n")
    line = statistics_line(marks)
    if line is not None:
        stream.write(f"{line}\n")
    for mark, _, count, names in _groups(marks):
        if not count:
            continue
        stream.write(f"{mark} ({count}):\n")
        stream.writelines(f"  {escaped(name)}\n" for name in names[:limit])
        if count > min(limit, len(names)):
            stream.write(f"  ... and {count - min(limit, len(names))} more (see the reports)\n")


def markdown_section(
    marks: BaselineMarks, cell: Callable[[str], str], *, limit: int = 50
) -> list[str]:
    """The Markdown summary's lines: a table of the counts, then the cases of each mark
    (regressed first), each name written by `cell` (escaped for Markdown)."""
    counts = marks.counts
    source = marks.baseline.source
    lines = [
        "### Compared with the baseline" + (f" {cell(source)}" if source else ""),
        "",
        "| Regressed | Fixed | New | Unchanged | Still failing | Removed |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {counts['regressed']} | {counts['fixed']} | {counts['new']} | "
        f"{counts['unchanged']} | {marks.still_failing} | {marks.removed} |",
        "",
    ]
    line = statistics_line(marks)
    if line is not None:
        lines += [f"**{line}**", ""]
    for mark, meaning, count, names in _groups(marks):
        if not count:
            continue
        lines += [f"**{mark.capitalize()} ({count})**: {meaning}", ""]
        lines += [f"- {cell(name)}" for name in names[:limit]]
        shown = min(limit, len(names), MAX_NAMED)
        if count > shown:
            lines.append(f"- … and {count - shown} more")
        lines.append("")
    return lines
