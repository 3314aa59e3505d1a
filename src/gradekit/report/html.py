"""One self-contained HTML file: summary counts, a filterable table of cases, and each case's
turns and results (composite results as a tree) folded under the case's name."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any, TextIO

from gradekit._frozen import thaw
from gradekit.report._atomic import atomic_text
from gradekit.report._page import SCRIPT, STYLE
from gradekit.report._text import duration, graded_rate, percent
from gradekit.report.model import CaseReport, ResultRecord, SuiteReport, TurnReport

__all__ = ["write_html"]

_OUTCOME_WORD = {"pass": "passed", "fail": "failed", "error": "errored"}


def _badge(outcome: str, text: str | None = None) -> str:
    return f'<span class="badge {outcome}">{escape(text or outcome)}</span>'


def _score(value: float) -> str:
    return f"{value:.2f}"


# An errored case or turn has a score (the mean of its results that did not error), but showing
# it would read as success: it shows this instead.
_NO_SCORE = "—"


def _result_item(data: Mapping[str, Any], advisory: bool = False) -> str:
    """One result as a list item; a composite's `details.results` nest below it."""
    outcome = "error" if data.get("error") else ("pass" if data.get("passed") else "fail")
    details = data.get("details")
    children: Sequence[Any] = ()
    rest: Any = None
    if isinstance(details, Mapping):
        found = details.get("results")
        if isinstance(found, Sequence) and not isinstance(found, str):
            children = [child for child in found if isinstance(child, Mapping)]
        rest = {key: value for key, value in details.items() if key != "results"} or None
    elif details is not None:
        rest = details
    parts = [
        f'<li class="result {outcome}">{_badge(outcome)} <b>{escape(str(data.get("name")))}</b>',
        f" <code>{escape(str(data.get('kind')))}</code>",
    ]
    if outcome != "error":
        parts.append(f' <span class="muted">score {_score(float(data.get("score") or 0.0))}</span>')
    if advisory:
        parts.append(' <span class="advisory">advisory</span>')
    text = data.get("error") or data.get("message")
    if text:
        parts.append(f" — {escape(str(text))}")
    if rest is not None:
        dumped = json.dumps(rest, indent=2, ensure_ascii=False, default=str)
        parts.append(f"<details><summary>details</summary><pre>{escape(dumped)}</pre></details>")
    if children:
        parts.append('<ul class="results">')
        parts.extend(_result_item(child) for child in children)
        parts.append("</ul>")
    parts.append("</li>")
    return "".join(parts)


def _record_item(record: ResultRecord) -> str:
    result = record.result
    data = {
        "kind": result.kind,
        "name": result.name,
        "passed": result.passed,
        "score": result.score,
        "message": result.message,
        "error": result.error,
        "details": thaw(result.details) if result.details is not None else None,
    }
    return _result_item(data, record.advisory)


def _turn_block(turn: TurnReport) -> str:
    if turn.skipped:
        head = f"Turn {turn.index} {_badge('skip', 'skipped')}"
        return f'<div class="turn"><h4>{head}</h4></div>'
    outcome = "error" if turn.errored else ("pass" if turn.passed else "fail")
    shown = _NO_SCORE if turn.errored else _score(turn.score)
    score = f"<span class='muted'>score {shown}</span>"
    head = f"Turn {turn.index} {_badge(outcome)} {score}"
    items = "".join(_record_item(record) for record in turn.results)
    return f'<div class="turn"><h4>{head}</h4><ul class="results">{items}</ul></div>'


def _case_row(case: CaseReport) -> str:
    outcome = case.outcome
    inner = []
    if case.error is not None:
        inner.append(f'<p class="error">{escape(case.error)}</p>')
    inner.extend(_turn_block(turn) for turn in case.turns)
    return (
        f'<tr class="case" data-name="{escape(case.name.lower())}" data-outcome="{outcome}">'
        f"<td>{_badge(outcome)}</td>"
        f"<td><details><summary>{escape(case.name)}</summary>{''.join(inner)}</details></td>"
        f'<td class="num">{"error" if outcome == "error" else _score(case.score)}</td>'
        f'<td class="num">{len(case.turns)}</td>'
        f'<td class="num">{case.duration_ms:.1f} ms</td></tr>\n'
    )


def _header(out: TextIO, report: SuiteReport) -> None:
    summary = report.summary
    if not report.complete:
        verdict = _badge("error", "interrupted")
    else:
        verdict = _badge("pass", "passed") if report.passed else _badge("fail", "failed")
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>gradekit: {escape(report.suite)}</title><style>{STYLE}</style></head>\n"
        f"<body><header><h1>gradekit: {escape(report.suite)} {verdict}</h1>"
        '<div class="counts" id="summary">'
    )
    counts = [
        ("cases", summary.cases),
        ("passed", summary.passed),
        ("failed", summary.failed),
        ("errored", summary.errored),
    ]
    for label, value in counts:
        out.write(f'<div class="count" id="count-{label}"><b>{value}</b> {label}</div>')
    out.write(
        f'<div class="count" id="pass-rate"><b>{percent(summary.pass_rate)}</b> pass rate</div>'
    )
    graded = graded_rate(summary)
    if graded is not None:
        out.write(
            f'<div class="count" id="graded-pass-rate"><b>{graded}</b> of the graded cases</div>'
        )
    out.write(f'<div class="count"><b>{duration(report.duration_ms)}</b> duration</div></div>\n')
    if summary.graders:
        out.write(
            '<table id="graders"><thead><tr><th>Grader</th><th class="num">Passed</th>'
            '<th class="num">Failed</th><th class="num">Errored</th>'
            '<th class="num">Pass rate</th><th class="num">Mean score</th></tr></thead><tbody>'
        )
        for name, grader in summary.graders.items():
            rate = percent(grader.pass_rate)
            mean = "-" if grader.mean_score is None else f"{grader.mean_score:.3f}"
            out.write(
                f'<tr><td>{escape(name)}</td><td class="num">{grader.passed}</td>'
                f'<td class="num">{grader.failed}</td><td class="num">{grader.errored}</td>'
                f'<td class="num">{rate}</td><td class="num">{mean}</td></tr>'
            )
        out.write("</tbody></table>\n")
    out.write(
        '</header><main><div class="filters">'
        '<input id="filter" type="search" placeholder="Filter cases by name (glob: * ?)"'
        ' aria-label="Filter cases by name">'
        '<select id="outcome" aria-label="Outcome"><option value="">every outcome</option>'
        + "".join(f'<option value="{key}">{word}</option>' for key, word in _OUTCOME_WORD.items())
        + '</select><span id="shown"></span></div>\n'
        '<table id="cases"><thead><tr><th>Outcome</th><th>Case</th><th class="num">Score</th>'
        '<th class="num">Turns</th><th class="num">Time</th></tr></thead><tbody>\n'
    )


def write_html(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport] | None = None,
) -> None:
    """Write `report` as one self-contained HTML page to `path`, atomically."""
    with atomic_text(path) as out:
        _header(out, report)
        for case in report.cases if cases is None else cases:
            out.write(_case_row(case))
        out.write(f"</tbody></table></main><script>{SCRIPT}</script></body></html>\n")
