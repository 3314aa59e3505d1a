"""A Markdown summary a CI job can post on a pull request: verdict, counts, graders, and each
case that did not pass in a `<details>` block with its messages and the sample it graded.

Whatever the names, messages and outputs hold (backticks, `*`, `<`, `&`, `|`, control
characters), they read back as they are: table cells are backslash-escaped, `<summary>`
lines HTML-escaped, messages are code spans and samples fenced code blocks whose fences are
longer than any run of backticks inside. The text never exceeds `max_bytes` (GitHub refuses a
job summary over 1 MiB): the cases that do not fit are counted instead of listed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from html import escape

from gradekit.report.attempts import case_label, markdown_lines
from gradekit.report.files import atomic_text
from gradekit.report.model import CaseReport, SuiteReport, failing_lines, graded_rate
from gradekit.report.samples import sample_parts
from gradekit.report.text import (
    duration,
    one_line,
    percent,
    rate_with_interval,
    score_with_interval,
)

__all__ = ["MAX_BYTES", "MAX_LISTED", "code_span", "render_markdown", "write_markdown"]

MAX_LISTED = 50
"""At most this many failing cases are listed; the rest are counted."""

MAX_BYTES = 1_000_000
"""The summary's size bound in UTF-8 bytes: under GitHub's 1 MiB job summary limit. (A pull
request comment takes at most 65,536 characters: pass `max_bytes=65_000` for one.)"""

SAMPLE_LIMIT = 1500
"""At most this many characters of each part of a sample are shown."""

MAX_GRADER_ROWS = 200
"""At most this many rows in the graders table; the rest are counted."""

MAX_LINES = 20
"""At most this many failing results, and as many turns' samples, shown per case."""

_INLINE_MARKUP = re.compile(r"([\\`*_\[\]<>&|~!])")
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_VERDICT_MARK = {"fail": "❌", "error": "⚠️"}
_OUTCOME_WORD = {"fail": "failed", "error": "errored"}


def _visible(text: str) -> str:
    """Control characters and characters no text can hold, as escapes (`\\x00`, `\\ufffe`)."""
    return _INVISIBLE.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) <= 0xFF else f"\\u{ord(m[0]):04x}", text
    )


def _cell(text: str, limit: int = 200) -> str:
    """A name as literal text in a table cell or a heading (one line, markup escaped)."""
    return _INLINE_MARKUP.sub(r"\\\1", one_line(_visible(text), limit))


def code_span(text: str, *, in_table: bool = False) -> str:
    """`text` (one line) as a code span that shows it exactly: fenced by one more backtick
    than its longest run of them, and padded with a space each side (which CommonMark strips)
    when it holds a backtick; in a table cell `|` is escaped (GitHub reads `\\|` there as
    `|`, even in a code span)."""
    if in_table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    if not longest and not (text.startswith(" ") and text.endswith(" ")):
        return f"`{text}`"
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def _code_block(text: str) -> str:
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = _visible(text.replace("\r\n", "\n").replace("\r", "\\r"))
    return f"{fence}text\n{body}\n{fence}"


def _case_block(case: CaseReport, mark: str) -> str:
    """One case that did not pass, folded in a `<details>` block; `mark`: its baseline mark
    when it has one worth showing (`regressed`, `new`), else empty."""
    outcome = case.outcome
    name = escape(one_line(_visible(case_label(case.name, case.attempt)), 300))
    reasons = failing_lines(case)
    parts = [
        f"<details><summary>{_VERDICT_MARK[outcome]} <b>{name}</b>: "
        f"{_OUTCOME_WORD[outcome]}{f' ({mark})' if mark else ''}</summary>",
        "",
        *(f"- {code_span(_visible(line))}" for line in reasons[:MAX_LINES]),
    ]
    trace = _trace_line(case)
    if trace is not None:
        parts.insert(2, f"- {code_span(_visible(trace))}")
    if len(reasons) > MAX_LINES:
        parts.append(f"- … and {len(reasons) - MAX_LINES} more")
    parts.append("")
    samples = case.turn_samples()
    failing = [t for t in case.turns if not (t.skipped or t.passed) and t.index in samples]
    for turn in failing[:MAX_LINES]:
        sample = samples[turn.index]
        parts += [f"**turn {turn.index}**", ""]
        for label, text in sample_parts(sample, SAMPLE_LIMIT):
            parts += [f"{label}:", _code_block(text), ""]
    parts += ["</details>", ""]
    return "\n".join(parts)


def _trace_line(case: CaseReport) -> str | None:
    """The figures of the trace a case was read from (`traces:`), None for other cases."""
    metadata = None if case.metadata is None else case.metadata.to_dict()
    trace = metadata.get("trace") if isinstance(metadata, Mapping) else None
    if not isinstance(trace, Mapping):
        return None
    figure = {key: "?" if trace.get(key) is None else trace[key] for key in _TRACE_FIGURES}
    duration = trace.get("duration_ms")
    took = f"{duration:.0f} ms" if isinstance(duration, (int, float)) else "?"
    return (
        f"trace {figure['id']}: model {figure['model']}, tokens "
        f"{figure['input_tokens']} in / {figure['output_tokens']} out, {took}, "
        f"error spans {figure['error_spans']}"
    )


_TRACE_FIGURES = ("id", "model", "input_tokens", "output_tokens", "error_spans")
"""The figures of a trace line; one the spans do not give shows as `?`, as in the HTML."""


def _pass_at_k(report: SuiteReport) -> list[str]:
    figures = report.summary.pass_at_k
    return [] if figures is None else markdown_lines(figures, _cell)


def _graders_table(report: SuiteReport) -> list[str]:
    graders = report.summary.graders
    if not graders:
        return []
    lines = [
        "| Grader | Passed | Failed | Errored | Pass rate | Mean score |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for number, (name, grader) in enumerate(graders.items()):
        if number == MAX_GRADER_ROWS:
            lines.append(f"| … and {len(graders) - number} more | | | | | |")
            break
        total = grader.passed + grader.failed + grader.errored
        # Passed out of every result: errored results count against the rate.
        rate = grader.passed / total if total else None
        level = report.summary.interval_level
        mean = score_with_interval(grader.mean_score, grader.mean_score_interval, level)
        lines.append(
            f"| {_cell(name)} | {grader.passed} | {grader.failed} | {grader.errored} "
            f"| {percent(rate)} | {mean} |"
        )
    return [*lines, ""]


def render_markdown(
    report: SuiteReport,
    cases: Iterable[CaseReport] | None = None,
    *,
    max_bytes: int = MAX_BYTES,
) -> str:
    """The Markdown text of the summary (failing cases listed from `cases`: `CaseReport`s or
    their JSON forms, whose samples are shown when present), at most `max_bytes` long."""
    if not report.complete:
        verdict = "⚠️ interrupted"
    elif report.passed:
        verdict = "✅ passed"
    else:
        verdict = "❌ failed"
    lines = [
        f"## gradekit: {_cell(report.suite)} {verdict}",
        "",
        *_environment(report),
        *_counts_table(report),
        "",
        *_graders_table(report),
        *_pass_at_k(report),
    ]
    marks = report.baseline
    if marks is not None:
        from gradekit.report.marks import markdown_section

        lines += markdown_section(marks, _cell)
    text = "\n".join(lines)
    budget = max_bytes - len(text.encode()) - 200  # room for the heading and the count below
    blocks: list[str] = []
    more = 0
    for item in report.cases if cases is None else cases:
        if item.outcome == "pass":
            continue
        if more or len(blocks) >= MAX_LISTED:
            more += 1
            continue
        mark = "" if marks is None else marks.mark(item)
        block = _case_block(item, "" if mark == "unchanged" else mark)
        size = len(block.encode()) + 1
        if size > budget:
            more += 1
            continue
        budget -= size
        blocks.append(block)
    if blocks or more:
        text += "\n### Cases that did not pass\n\n" + "\n".join(blocks)
        if more:
            text += f"\n… and {more} more not listed\n"
    return text


def write_markdown(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport] | None = None,
    *,
    max_bytes: int = MAX_BYTES,
) -> None:
    """Write the Markdown summary of `report` to `path`, atomically."""
    text = render_markdown(report, cases, max_bytes=max_bytes)
    with atomic_text(path) as out:
        out.write(text)


def _environment(report: SuiteReport) -> list[str]:
    """One line: the versions, the suite's hash, and who provided the kinds (by provider)."""
    environment = report.environment
    if environment is None:
        return []
    parts = [f"gradekit {environment.gradekit or '?'}", f"Python {environment.python}"]
    if environment.suite_sha256 is not None:
        parts.append(f"suite sha256 `{environment.suite_sha256[:12]}`")
    providers: dict[str, list[str]] = {}
    for kind, source in sorted(environment.kinds.items()):
        providers.setdefault(source.label(), []).append(kind)
    if providers:
        parts.append(
            "kinds: "
            + "; ".join(
                f"{_cell(label)} ({', '.join(_cell(kind) for kind in kinds[:MAX_LINES])}"
                + (f", … {len(kinds) - MAX_LINES} more)" if len(kinds) > MAX_LINES else ")")
                for label, kinds in list(providers.items())[:MAX_LINES]
            )
        )
    return [" · ".join(parts), ""]


def _counts_table(report: SuiteReport) -> list[str]:
    """The case counts, the pass rate (over all cases), the rate over the graded cases beside
    it when a case errored, and the duration."""
    summary = report.summary
    graded = graded_rate(summary)
    extra = ("", "") if graded is None else (" Graded pass rate |", " ---: |")
    cells = "" if graded is None else f" {graded} |"
    level = summary.interval_level
    return [
        f"| Cases | Passed | Failed | Errored | Pass rate |{extra[0]} Duration |",
        f"| ---: | ---: | ---: | ---: | ---: |{extra[1]} ---: |",
        f"| {summary.cases} | {summary.passed} | {summary.failed} | {summary.errored} "
        f"| {rate_with_interval(summary.pass_rate, summary.pass_rate_interval, level)} "
        f"|{cells} {duration(report.duration_ms)} |",
    ]
