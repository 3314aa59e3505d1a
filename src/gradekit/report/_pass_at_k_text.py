"""pass@k as the console, Markdown and JUnit reports show it (see `gradekit.report.attempts`):
each mean with its interval where it has one (`mean_shown`), as the pass rate is shown."""

from __future__ import annotations

from collections.abc import Callable

from gradekit.report.attempts import GroupCounts, PassAtK
from gradekit.report.text import percent, rate_with_interval

__all__ = [
    "MAX_GROUP_ROWS",
    "group_line",
    "junit_properties",
    "markdown_lines",
    "mean_shown",
    "summary_line",
]

MAX_GROUP_ROWS = 50
"""At most this many case groups in the Markdown table; the rest are counted."""


def _counts(attempts: int, errored: int) -> str:
    return f"{attempts} attempt{'s' if attempts != 1 else ''}, {errored} errored"


def mean_shown(figures: PassAtK) -> Callable[[str], str]:
    """`shown(key)`: the mean of `key` (`pass@5`, `pass^5`) over the groups, with its
    interval when it has one (averaged over at least two groups): `60.0% (95% CI 41.0-79.0)`."""
    means = figures.means()
    intervals = figures.mean_intervals()
    level = figures.interval_level

    def shown(key: str) -> str:
        interval = intervals.get(key)
        return rate_with_interval(
            means[key], None if interval is None else (interval[0], interval[1]), level
        )

    return shown


def summary_line(figures: PassAtK) -> str:
    """`pass@k over 3 cases (25 attempts, 2 errored): pass@1 60.0% (95% CI 41.0-79.0) pass^1
    ... | pass@5 ...`, with the number of cases averaged at each k that not every case has
    attempts for."""
    groups = figures.groups
    mean_text = mean_shown(figures)
    parts = []
    for k in figures.ks:
        counted = figures.counted(k)
        over = "" if counted == len(groups) else f" ({counted} of the cases)"
        parts.append(f"pass@{k} {mean_text(f'pass@{k}')} pass^{k} {mean_text(f'pass^{k}')}{over}")
    attempts = sum(group.attempts for group in groups)
    errored = sum(group.errored for group in groups)
    noun = "case" if len(groups) == 1 else "cases"
    return (
        f"pass@k over {len(groups)} {noun} of several attempts ({_counts(attempts, errored)}): "
        + " | ".join(parts)
    )


def group_line(group: GroupCounts, figures: PassAtK) -> str:
    """One case group: `add: 10 attempts, 1 errored, 6 passed: pass@1 60.0% pass^1 60.0% ...`."""
    shown = group.figures(figures.ks)
    parts = [
        f"pass@{k} {percent(shown[f'pass@{k}'])} pass^{k} {percent(shown[f'pass^{k}'])}"
        for k in figures.ks
        if f"pass@{k}" in shown
    ]
    return f"{_counts(group.attempts, group.errored)}, {group.passed} passed: " + " | ".join(parts)


def markdown_lines(figures: PassAtK, cell: Callable[[str], str]) -> list[str]:
    """The Markdown section: the means per k, then a table of the case groups (`cell`
    escapes a name for a table cell), then the notes."""
    groups = figures.groups
    mean_text = mean_shown(figures)
    attempts = sum(group.attempts for group in groups)
    errored = sum(group.errored for group in groups)
    lines = [
        "### pass@k",
        "",
        f"{len(groups)} case{'s' if len(groups) != 1 else ''} of several attempts "
        f"({_counts(attempts, errored)}; an errored attempt counts as not passed).",
        "",
        "| k | pass@k | pass^k | Cases |",
        "| ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {k} | {mean_text(f'pass@{k}')} | {mean_text(f'pass^{k}')} | {figures.counted(k)} |"
        for k in figures.ks
    ]
    heads = "".join(f" pass@{k} | pass^{k} |" for k in figures.ks)
    lines += [
        "",
        f"| Case | Attempts | Passed | Errored |{heads}",
        "| --- | ---: | ---: | ---: |" + " ---: |" * (2 * len(figures.ks)),
    ]
    for number, group in enumerate(groups):
        if number == MAX_GROUP_ROWS:
            lines.append(f"| … and {len(groups) - number} more | | | |")
            break
        shown = group.figures(figures.ks)
        cells = "".join(
            f" {percent(shown.get(f'pass@{k}'))} | {percent(shown.get(f'pass^{k}'))} |"
            for k in figures.ks
        )
        lines.append(
            f"| {cell(group.name)} | {group.attempts} | {group.passed} | {group.errored} |{cells}"
        )
    lines += [f"\n> {note}" for note in figures.notes]
    return [*lines, ""]


def junit_properties(figures: PassAtK) -> list[tuple[str, str]]:
    """JUnit `<property>` names and values: `gradekit.pass@1` (the mean over the cases),
    `gradekit.pass^1`, ..., then `gradekit.case.NAME.pass@1` ... and the counts per case."""
    means = figures.means()
    found = [("gradekit.pass_at_k.cases", str(len(figures.groups)))]
    for k in figures.ks:
        found += [(f"gradekit.{key}", repr(means[key])) for key in (f"pass@{k}", f"pass^{k}")]
    for group in figures.groups:
        head = f"gradekit.case.{group.name}."
        found += [
            (head + "attempts", str(group.attempts)),
            (head + "passed", str(group.passed)),
            (head + "errored", str(group.errored)),
        ]
        found += [(head + key, repr(value)) for key, value in group.figures(figures.ks).items()]
    return found
