"""How a `Comparison` is shown: plain text for the console, Markdown for a pull request, a
self-contained HTML page, and JSON for tools; the last three written atomically."""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable

from gradekit.history.compare import CaseChange, Comparison
from gradekit.history.statistics import verdict_line, verdict_of
from gradekit.report.files import atomic_text
from gradekit.report.html import STYLE, badge
from gradekit.report.markdown import code_span
from gradekit.report.text import (
    escaped,
    level_text,
    one_line,
    percent,
    points,
)

__all__ = [
    "render_html",
    "render_markdown",
    "render_text",
    "write_compare_html",
    "write_compare_json",
    "write_compare_markdown",
]

_SHOWN = 50
"""Cases listed per section; the rest are counted."""

_SECTIONS = (
    ("regressed", "Regressed (passing before)"),
    ("new_errors", "Newly erroring"),
    ("fixed", "Fixed (passing now)"),
    ("now_failing", "Failing now (erroring before)"),
    ("new", "New (not in the baseline)"),
    ("removed", "Removed"),
)


def _outcome(value: str | None) -> str:
    return "absent" if value is None else value


def _rate_line(comparison: Comparison) -> str:
    """The pass-rate change in one line: with the paired statistics, their verdict line."""
    statistics = comparison.statistics
    if statistics is not None:
        all_paired = not comparison.new and not comparison.removed
        return verdict_line(
            comparison.base_pass_rate,
            comparison.new_pass_rate,
            statistics,
            all_paired=all_paired,
        )
    change = comparison.pass_rate_change
    delta = "" if change is None else f" ({points(change)} points)"
    return (
        f"pass rate {percent(comparison.base_pass_rate)} -> "
        f"{percent(comparison.new_pass_rate)}{delta}"
    )


def _counts_line(comparison: Comparison) -> str:
    """How the new run's cases compare, with the marks of `gradekit run --baseline`: regressed
    + fixed + new + unchanged is the new run's cases; removed are the baseline's others."""
    c = comparison
    return (
        f"{len(c.regressed)} regressed, {len(c.fixed)} fixed, {len(c.new)} new, "
        f"{c.unchanged} unchanged ({c.still_failing} still failing), {len(c.removed)} removed"
    )


def _sections(comparison: Comparison) -> Iterable[tuple[str, tuple[CaseChange, ...]]]:
    for attribute, title in _SECTIONS:
        changes: tuple[CaseChange, ...] = getattr(comparison, attribute)
        if changes:
            yield title, changes


def _grader_changes(comparison: Comparison) -> list[tuple[str, str, str, str]]:
    """Each grader scored in both runs: its name, mean-score change with its interval, p-value
    of the paired t-test, and verdict at the statistics' alpha."""
    statistics = comparison.statistics
    if statistics is None:
        return []
    rows: list[tuple[str, str, str, str]] = []
    level = level_text(statistics.interval_level)
    for name, change in (statistics.graders or {}).items():
        if change.mean_score_change is None:
            continue
        shown = f"{change.mean_score_change:+.3f}"
        if change.mean_score_change_interval is not None:
            low, high = change.mean_score_change_interval
            shown += f" ({level} CI {low:+.3f} to {high:+.3f})"
        p_value = "-" if change.p_value is None else f"{change.p_value:.2g}"
        verdict = verdict_of(change.mean_score_change, change.p_value, statistics.alpha)
        rows.append((name, shown, p_value, verdict))
    return rows


def render_text(comparison: Comparison) -> str:
    """The console view: the pass-rate change, the count of each mark, then each non-empty
    section."""
    lines = [_rate_line(comparison), _counts_line(comparison)]
    for title, changes in _sections(comparison):
        lines.append(f"{title}: {len(changes)}")
        lines.extend(
            f"  {escaped(c.label)}: {_outcome(c.base)} -> {_outcome(c.new)}"
            for c in changes[:_SHOWN]
        )
        if len(changes) > _SHOWN:
            lines.append(f"  ... and {len(changes) - _SHOWN} more")
    if comparison.score_changes:
        lines.append(f"Score changes: {len(comparison.score_changes)}")
        lines.extend(
            f"  {escaped(c.label)} turn {c.turn} {escaped(c.grader)}: {c.base:.3g} -> "
            f"{c.new:.3g} ({c.delta:+.3g})"
            for c in comparison.score_changes[:_SHOWN]
        )
    if len(lines) == 2:
        lines.append("no case changed outcome")
    graders = _grader_changes(comparison)
    if graders:
        lines.append("Mean score changes (paired t-test):")
        lines.extend(
            f"  {escaped(name)}: {shown}, p = {p_value}: {verdict}"
            for name, shown, p_value, verdict in graders[:_SHOWN]
        )
    if comparison.kind_changes:
        lines.append("note: kinds provided by another version (a score change may come from it):")
        lines.extend(f"  {escaped(change.text())}" for change in comparison.kind_changes)
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """Text safe in a Markdown table cell or list item, shown exactly: a code span on one
    line, control characters as escapes (`one_line`), backticks kept (`markdown.code_span`)."""
    return code_span(one_line(text), in_table=True)


def render_markdown(comparison: Comparison) -> str:
    """A Markdown summary for a pull request comment."""
    lines = [
        "## gradekit: comparison with the baseline",
        "",
        _rate_line(comparison),
        "",
        _counts_line(comparison),
        "",
    ]
    for title, changes in _sections(comparison):
        lines += [
            f"### {title}: {len(changes)}",
            "",
            "| case | before | now |",
            "| --- | --- | --- |",
        ]
        lines += [
            f"| {_md(c.label)} | {_outcome(c.base)} | {_outcome(c.new)} |" for c in changes[:_SHOWN]
        ]
        if len(changes) > _SHOWN:
            lines.append(f"\n... and {len(changes) - _SHOWN} more")
        lines.append("")
    if comparison.score_changes:
        lines += [
            f"### Score changes: {len(comparison.score_changes)}",
            "",
            "| case | turn | grader | before | now |",
            "| --- | ---: | --- | ---: | ---: |",
        ]
        lines += [
            f"| {_md(c.label)} | {c.turn} | {_md(c.grader)} | {c.base:.3g} | {c.new:.3g} |"
            for c in comparison.score_changes[:_SHOWN]
        ]
    graders = _grader_changes(comparison)
    if graders:
        lines += [
            "",
            "### Mean score changes (paired t-test)",
            "",
            "| grader | change | p | verdict |",
            "| --- | ---: | ---: | --- |",
        ]
        lines += [f"| {_md(name)} | {shown} | {p} | {v} |" for name, shown, p, v in graders]
    if comparison.kind_changes:
        lines += ["", "### Kinds provided by another version", ""]
        lines += [f"- {code_span(one_line(change.text()))}" for change in comparison.kind_changes]
    return "\n".join(lines) + "\n"


_PAGE_STYLE = (
    "body{display:block;height:auto}main{padding:4px 20px 20px}"
    "main h2{font-size:16px;margin:18px 0 4px}main table{min-width:40%}"
    "p.verdict{margin:4px 0 8px}.count.fail b{color:var(--fail)}.count.pass b{color:var(--pass)}"
)
"""The run report's style (`gradekit.report.html.STYLE`) is the page's; the viewer's
full-height layout is not needed for a page of tables."""

_VERDICT_BADGE = {"worse": "fail", "better": "pass"}


def _outcome_cell(value: str | None) -> str:
    outcome = _outcome(value)
    shown = badge(outcome, outcome) if value is not None else outcome
    return f"<td>{shown}</td>"


def _table(table_id: str, headers: Iterable[str], rows: Iterable[str]) -> str:
    """A table of the run report's look: `headers` (a leading `#` aligns the column right)."""
    head = "".join(
        f'<th class="num">{h[1:]}</th>' if h.startswith("#") else f"<th>{h}</th>" for h in headers
    )
    body = "".join(rows)
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _number(value: float, form: str) -> str:
    return f'<td class="num">{value:{form}}</td>'


def render_html(comparison: Comparison) -> str:
    """One self-contained page (no script, no network) with the same sections, in the run
    report's style: counts in boxes, outcomes as badges, numbers aligned right with thousands
    separators."""
    e = html.escape
    c = comparison
    statistics = c.statistics
    verdict = "" if statistics is None else statistics.verdict
    shown = badge(_VERDICT_BADGE.get(verdict, "skip"), verdict) if verdict else ""
    counts = [
        ("regressed", len(c.regressed), " fail"),
        ("fixed", len(c.fixed), " pass"),
        ("new", len(c.new), ""),
        ("unchanged", c.unchanged, ""),
        ("still failing", c.still_failing, ""),
        ("removed", len(c.removed), ""),
    ]
    boxes = "".join(
        f'<div class="count{style}" id="count-{word.replace(" ", "-")}"><b>{n:,}</b> {word}</div>'
        for word, n, style in counts
    )
    rates = f"{percent(c.base_pass_rate)} &rarr; {percent(c.new_pass_rate)}"
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>gradekit: comparison with the baseline</title><style>{STYLE}{_PAGE_STYLE}"
        "</style></head>\n<body><header><h1>gradekit: comparison with the baseline "
        f'{shown}</h1><div class="counts" id="summary"><div class="count" id="pass-rate">'
        f"<b>{rates}</b> pass rate</div>{boxes}</div></header>\n<main>"
        f'<p class="verdict" id="verdict">{e(_rate_line(c))}</p>',
    ]
    for title, changes in _sections(c):
        rows = (
            f"<tr><td>{e(change.label)}</td>{_outcome_cell(change.base)}"
            f"{_outcome_cell(change.new)}</tr>"
            for change in changes
        )
        section = next(a for a, t in _SECTIONS if t == title)
        parts.append(f"<h2>{e(title)}: {len(changes):,}</h2>")
        parts.append(_table(f"section-{section}", ("case", "before", "now"), rows))
    if c.score_changes:
        rows = (
            f"<tr><td>{e(change.label)}</td>{_number(change.turn, ',')}<td>{e(change.grader)}"
            f"</td>{_number(change.base, '.3g')}{_number(change.new, '.3g')}"
            f"{_number(change.delta, '+.3g')}</tr>"
            for change in c.score_changes
        )
        parts.append(f"<h2>Score changes: {len(c.score_changes):,}</h2>")
        parts.append(
            _table("score-changes", ("case", "#turn", "grader", "#before", "#now", "#change"), rows)
        )
    graders = _grader_changes(c)
    if graders:
        rows = (
            f'<tr><td>{e(name)}</td><td class="num">{e(change)}</td><td class="num">{p}</td>'
            f"<td>{e(v)}</td></tr>"
            for name, change, p, v in graders
        )
        parts.append("<h2>Mean score changes (paired t-test)</h2>")
        parts.append(_table("grader-changes", ("grader", "#change", "#p", "verdict"), rows))
    if c.kind_changes:
        items = "".join(f"<li>{e(change.text())}</li>" for change in c.kind_changes)
        parts.append(f"<h2>Kinds provided by another version</h2><ul>{items}</ul>")
    parts.append("</main></body></html>\n")
    return "".join(parts)


def write_compare_markdown(comparison: Comparison, path: str | os.PathLike[str]) -> None:
    """Write `render_markdown(comparison)` to `path`."""
    with atomic_text(path) as out:
        out.write(render_markdown(comparison))


def write_compare_html(comparison: Comparison, path: str | os.PathLike[str]) -> None:
    """Write `render_html(comparison)` to `path`."""
    with atomic_text(path) as out:
        out.write(render_html(comparison))


def write_compare_json(comparison: Comparison, path: str | os.PathLike[str]) -> None:
    """Write `comparison.to_dict()` to `path` as JSON."""
    with atomic_text(path) as out:
        out.write(json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False) + "\n")
