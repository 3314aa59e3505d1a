"""The HTML report's parts for a run compared with a baseline: the counts of each mark in the
summary, each a link to the viewer filtered on it (`#baseline=regressed`), and the paired
comparison's verdict line."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from gradekit.history.baseline import BaselineMarks
from gradekit.report.marks import statistics_line

__all__ = ["baseline_counts"]


def baseline_counts(marks: BaselineMarks, link: Callable[[dict[str, str], str], str]) -> str:
    """The summary's row of counts against the baseline; `link(state, text)`: a link to the
    viewer in that state."""
    source = marks.baseline.source
    named = f" <code>{escape(source)}</code>" if source else ""
    parts = [f'<div class="counts" id="baseline-counts"><div class="count">against{named}</div>']
    for mark in ("regressed", "fixed", "new", "unchanged"):
        count = link({"baseline": mark}, str(marks.counts[mark]))
        parts.append(f'<div class="count mark-{mark}" id="count-{mark}">{count} {mark}</div>')
    parts.append(f'<div class="count" id="count-removed"><b>{marks.removed}</b> removed</div>')
    parts.append("</div>\n")
    line = statistics_line(marks)
    if line is not None:
        parts.append(f'<p class="verdict" id="baseline-verdict">{escape(line)}</p>\n')
    return "".join(parts)
