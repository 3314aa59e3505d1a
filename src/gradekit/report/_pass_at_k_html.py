"""pass@k in the HTML report: the summary's box (means per k, each case group), and the data
the viewer's case header reads (`gk-pass-at-k`: each group's line, by case name)."""

from __future__ import annotations

import json
from html import escape
from typing import TextIO

from gradekit.report._html_data import script_safe
from gradekit.report._pass_at_k_text import group_line, mean_shown, summary_line
from gradekit.report.attempts import PassAtK
from gradekit.report.text import percent

__all__ = ["MAX_HTML_GROUPS", "write_pass_at_k_box", "write_pass_at_k_data"]

MAX_HTML_GROUPS = 500
"""At most this many case groups in the summary's table; the rest are counted (each case's
header still shows its group's figures)."""


def write_pass_at_k_box(out: TextIO, figures: PassAtK) -> None:
    """The summary's `pass@k` box: the line of means, the table per k (each mean with its
    interval where it has one), the case groups."""
    mean_text = mean_shown(figures)
    out.write(
        '<details id="pass-at-k-box" open><summary>pass@k '
        f"({len(figures.groups)} cases of several attempts)</summary>"
        f'<p id="pass-at-k-line">{escape(summary_line(figures))}</p>'
        '<table id="pass-at-k"><thead><tr><th class="num">k</th><th class="num">pass@k</th>'
        '<th class="num">pass^k</th><th class="num">Cases</th></tr></thead><tbody>'
    )
    for k in figures.ks:
        out.write(
            f'<tr><td class="num">{k}</td><td class="num">{escape(mean_text(f"pass@{k}"))}</td>'
            f'<td class="num">{escape(mean_text(f"pass^{k}"))}</td>'
            f'<td class="num">{figures.counted(k)}</td></tr>'
        )
    out.write('</tbody></table><table id="pass-at-k-groups"><thead><tr><th>Case</th>')
    out.write('<th class="num">Attempts</th><th class="num">Passed</th>')
    out.write('<th class="num">Errored</th>')
    out.writelines(
        f'<th class="num">pass@{k}</th><th class="num">pass^{k}</th>' for k in figures.ks
    )
    out.write("</tr></thead><tbody>")
    for group in figures.groups[:MAX_HTML_GROUPS]:
        shown = group.figures(figures.ks)
        cells = "".join(
            f'<td class="num">{percent(shown.get(f"pass@{k}"))}</td>'
            f'<td class="num">{percent(shown.get(f"pass^{k}"))}</td>'
            for k in figures.ks
        )
        out.write(
            f"<tr><td>{escape(group.name)}</td><td class='num'>{group.attempts}</td>"
            f"<td class='num'>{group.passed}</td><td class='num'>{group.errored}</td>"
            f"{cells}</tr>"
        )
    out.write("</tbody></table>")
    hidden = len(figures.groups) - MAX_HTML_GROUPS
    if hidden > 0:
        out.write(f'<p class="muted">… and {hidden} more cases of several attempts</p>')
    out.writelines(f'<p class="muted note">{escape(note)}</p>' for note in figures.notes)
    out.write("</details>\n")


def write_pass_at_k_data(out: TextIO, figures: PassAtK | None) -> None:
    """The `gk-pass-at-k` script element: `{name: its group's line}` (none without groups)."""
    if figures is None:
        return
    lines = {group.name: group_line(group, figures) for group in figures.groups}
    text = script_safe(json.dumps(lines, ensure_ascii=False))
    out.write(f'<script type="application/json" id="gk-pass-at-k">{text}</script>\n')
