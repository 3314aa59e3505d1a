"""One self-contained HTML file: the run's summary, then a viewer of its cases (list, filters,
sorting, each case's sample beside every grader's verdict) drawn by the page's own script from
data embedded in the page. No network, no external asset.

The summary is plain markup (readable without script). The cases are data (`_html_data`):
the script reads a small index to draw the case list, only the rows on screen, and parses a
case's JSON when it is opened, so a run of any size opens at once.

The fixed parts of the HTML report, its style and its script, inlined into every page (no
network, no assets). They live as plain files in `report/_viewer/`, read once when the HTML
writer is first used: `viewer.css`, and the script's parts in the order they run.

pass@k in the HTML report: the summary's box (means per k, each case group), and the data
the viewer's case header reads (`gk-pass-at-k`: each group's line, by case name).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from html import escape
from importlib.resources import files
from typing import TextIO
from urllib.parse import quote

from gradekit.report._html_data import ViewerData, script_safe
from gradekit.report.attempts import PassAtK, group_line, mean_shown, summary_line
from gradekit.report.files import atomic_text
from gradekit.report.marks import baseline_counts
from gradekit.report.model import CaseReport, SuiteReport, graded_rate
from gradekit.report.text import duration, interval_text, percent, score_with_interval

__all__ = [
    "MAX_HTML_GROUPS",
    "SCRIPT",
    "STYLE",
    "badge",
    "write_html",
    "write_pass_at_k_box",
    "write_pass_at_k_data",
]


_ASSETS = files("gradekit.report") / "_viewer"  # a folder of assets, not a package

_SCRIPT_PARTS = ("dom.js", "detail.js", "list.js")
"""dom.js: element and text helpers, the collapsible tree; detail.js: one case's sample and
verdicts; list.js: the index, filters, sorting, the address, the virtual list (starts the
page)."""

STYLE = _ASSETS.joinpath("viewer.css").read_text(encoding="utf-8")

SCRIPT = "\n".join(_ASSETS.joinpath(name).read_text(encoding="utf-8") for name in _SCRIPT_PARTS)


def badge(outcome: str, text: str) -> str:
    """`text` in a coloured badge: `outcome` is `pass`, `fail`, `error` or `skip` (grey)."""
    return f'<span class="badge {outcome}">{escape(text)}</span>'


def _link(state: dict[str, str], text: str) -> str:
    """A link to the page itself with the viewer's state (filters) in its address."""
    query = "&".join(f"{key}={quote(value, safe='')}" for key, value in state.items())
    return f'<a href="#{escape(query)}">{escape(text)}</a>'


def _summary(out: TextIO, report: SuiteReport) -> None:
    summary = report.summary
    if not report.complete:
        verdict = badge("error", "interrupted")
    else:
        verdict = badge("pass", "passed") if report.passed else badge("fail", "failed")
    title = escape(report.suite)
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>gradekit: {title}</title><style>{STYLE}</style></head>\n"
        f'<body><header id="top"><h1>gradekit: {title} {verdict}</h1>'
        '<div class="counts" id="summary">'
        f'<div class="count" id="count-cases"><b>{summary.cases:,}</b> cases</div>'
    )
    for outcome, label, value in (
        ("pass", "passed", summary.passed),
        ("fail", "failed", summary.failed),
        ("error", "errored", summary.errored),
    ):
        out.write(
            f'<div class="count {outcome}" id="count-{label}">'
            f"{_link({'outcome': outcome}, f'{value:,}')} {label}</div>"
        )
    graded = graded_rate(summary)
    interval = interval_text(summary.pass_rate_interval, summary.interval_level)
    out.write(
        f'<div class="count" id="pass-rate"><b>{percent(summary.pass_rate)}</b> pass rate'
        + (f' <span class="ci">({interval})</span>' if interval else "")
        + "</div>"
        + (
            f'<div class="count" id="graded-pass-rate"><b>{graded}</b> of the graded cases</div>'
            if graded is not None
            else ""
        )
        + f'<div class="count"><b>{duration(report.duration_ms)}</b> duration</div></div>\n'
    )
    if report.baseline is not None:
        out.write(baseline_counts(report.baseline, _link))
    if summary.graders:
        opened = " open" if len(summary.graders) <= 12 else ""
        out.write(
            f'<details id="graders-box"{opened}><summary>Graders ({len(summary.graders)})'
            '</summary><table id="graders"><thead><tr><th>Grader</th>'
            '<th class="num">Passed</th><th class="num">Failed</th><th class="num">Errored</th>'
            '<th class="num">Pass rate</th><th class="num">Mean score</th></tr></thead><tbody>'
        )
        for name, grader in summary.graders.items():
            total = grader.passed + grader.failed + grader.errored
            # Passed out of every result: errored results count against the rate.
            rate = percent(grader.passed / total if total else None)
            mean = score_with_interval(
                grader.mean_score, grader.mean_score_interval, summary.interval_level
            )
            failed = _link({"grader": name, "outcome": "fail"}, f"{grader.failed:,}")
            errored = _link({"grader": name, "outcome": "error"}, f"{grader.errored:,}")
            out.write(
                f"<tr><td>{_link({'grader': name}, name)}</td>"
                f'<td class="num">{grader.passed:,}</td><td class="num">{failed}</td>'
                f'<td class="num">{errored}</td><td class="num">{rate}</td>'
                f'<td class="num">{mean}</td></tr>'
            )
        out.write("</tbody></table></details>\n")
    _environment(out, report)
    if summary.pass_at_k is not None:
        write_pass_at_k_box(out, summary.pass_at_k)
    out.write("</header>\n")


def _environment(out: TextIO, report: SuiteReport) -> None:
    """What the run was made with, folded: versions, the suite's hash, each kind's provider."""
    environment = report.environment
    if environment is None:
        return
    rows = [
        ("gradekit", environment.gradekit or "?"),
        ("Python", environment.python),
        ("suite sha256", environment.suite_sha256 or "none (a suite built in Python)"),
    ]
    rows += [(f"kind {kind}", source.label()) for kind, source in sorted(environment.kinds.items())]
    out.write(
        '<details id="environment"><summary>Environment</summary><table><tbody>'
        + "".join(f"<tr><th>{escape(key)}</th><td>{escape(value)}</td></tr>" for key, value in rows)
        + "</tbody></table></details>\n"
    )


_VIEWER = """<nav class="filters" id="toolbar">
<input id="filter" type="search" placeholder="Filter by name (glob: * ?)"
 aria-label="Filter cases by name">
<input id="search" type="search" placeholder="Search inputs and outputs"
 aria-label="Search inside the inputs, outputs and expected answers">
<select id="outcome" aria-label="Outcome"><option value="">every outcome</option>
<option value="fail">failed</option><option value="error">errored</option>
<option value="pass">passed</option></select>
<select id="grader" aria-label="Grader"><option value="">every grader</option></select>
<select id="tag" aria-label="Tag"><option value="">every tag</option></select>
<select id="meta" aria-label="Metadata"><option value="">any metadata</option></select>
<select id="baseline" aria-label="Against the baseline" hidden>
<option value="">against the baseline: all</option><option value="regressed">regressed</option>
<option value="fixed">fixed</option><option value="new">new</option>
<option value="unchanged">unchanged</option></select>
<select id="sort" aria-label="Sort"><option value="outcome">failures and errors first</option>
<option value="score">lowest score first</option><option value="-score">highest score first</option>
<option value="-duration">slowest first</option><option value="duration">fastest first</option>
<option value="-tokens">most tokens first</option><option value="-cost">costliest first</option>
<option value="-agent">slowest agent first</option>
<option value="name">name A to Z</option><option value="-name">name Z to A</option>
<option value="suite">suite order</option></select>
<span id="shown" aria-live="polite"></span></nav>
<main id="app"><div id="list" tabindex="0" aria-label="Cases">
<div class="row head"><span>Outcome</span><span>Case</span><span class="num">Score</span>
<span class="num">Turns</span><span class="num">Time</span><span>Not passed</span></div>
<div id="rows"><div id="spacer"></div></div></div>
<section id="detail"><p class="muted">Open a case to see what it was given, what the agent
answered and did, and every grader's verdict beside it.</p></section></main>
<noscript><p class="error">The case list is drawn by the page's script: allow JavaScript
for this file to see it.</p></noscript>
"""


def write_html(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport] | None = None,
) -> None:
    """Write `report` as one self-contained HTML page to `path`, atomically.

    `cases` replaces `report.cases` when given (`CaseReport`s), whose samples the page shows
    when present.
    """
    data = ViewerData(report.baseline)
    try:
        for item in report.cases if cases is None else cases:
            data.add(item)
        with atomic_text(path) as out:
            _summary(out, report)
            out.write(_VIEWER)
            write_pass_at_k_data(out, report.summary.pass_at_k)
            out.write('<script type="application/json" id="gk-index">')
            out.flush()
            data.write_index(out.buffer)
            out.buffer.flush()
            out.write(f"</script>\n<script>{SCRIPT}</script>\n")
            out.flush()
            data.write_cases(out.buffer)
            data.write_baseline_cases(out.buffer)
            out.buffer.flush()
            out.write("</body></html>\n")
    finally:
        data.close()


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
