"""A case's JSON text made straight from what graded it, with no report object in between.

A run that streams its cases into a JSON report (or a `--resume` log) and keeps none needs
each case only as its text: `case_json(CaseReport(...))`, which builds a `ResultRecord` per
grade, a `TurnReport` and a `SampleForm` per turn, a `CaseReport` and a `SampleForm` per case,
then walks them all again into dicts (`to_dict`) for the encoder. The functions here write the
same text from the parts (results, the turn's sample, the case's metadata), part by part:
each result's text, each turn's (from its results' texts), the case's (from its turns').
Values are encoded by the encoder `case_json` uses, so the text is the same character for
character; a property test holds `case_text(...)` equal to `case_json(CaseReport(...))`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any, Final, NamedTuple, TypeAlias

from gradekit._frozen import FrozenDict, thaw
from gradekit._types import GradeResult, Sample, ToolCall
from gradekit.report.model import CaseReport, Outcome, ResultRecord, TurnReport
from gradekit.report.samples import cut_text, json_value

__all__ = [
    "CaseText",
    "FinishedCase",
    "ResultForm",
    "case_text",
    "metadata_text",
    "record_text",
    "result_text",
    "sample_text",
    "turn_report_text",
    "turn_text",
]

_encode: Final = json.JSONEncoder(ensure_ascii=False).encode
"""The encoder of `case_json` (the same options)."""

_string: Final = encode_basestring
"""What that encoder writes for a text (`ensure_ascii=False`): the text quoted and escaped."""


_SKIPPED: Final = ', "skipped": true'


class CaseText(NamedTuple):
    """A finished case as the stream and the results log take it: its JSON text (one line,
    `case_json` of its report), its outcome, and what a baseline matches it by (its name and
    attempt index)."""

    text: str
    outcome: Outcome
    name: str
    attempt: int | None

    def report(self) -> CaseReport:
        """The case's report, read back from its text (as `--resume` reads a log's line)."""
        data: Any = json.loads(self.text)
        return CaseReport.from_dict(data)


FinishedCase: TypeAlias = "CaseReport | CaseText"
"""A finished case as the runner hands it over: its report, or only its text."""


def _value(value: Any) -> str:
    """`value` as the encoder writes it: plain values, and mappings and sequences of them,
    written here (the encoder builds its C encoder anew at each call: more than the writing
    of a small value)."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    if kind is int:
        return int.__repr__(value)
    if kind is dict or kind is FrozenDict:
        return _object(value)
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        items = [_string(item) if type(item) is str else _value(item) for item in value]
        return f"[{', '.join(items)}]"
    return _encode(thaw(value))


def _object(value: Mapping[Any, Any]) -> str:
    """A mapping as the encoder writes it (whose keys are texts; else the encoder's own)."""
    if not value:
        return "{}"
    parts = []
    for key, item in value.items():
        if type(key) is not str:
            return _encode(thaw(value))
        # Texts and booleans, the usual items, written here: a call of `_value` costs as
        # much again.
        kind = type(item)
        if kind is str:
            parts.append(f"{_string(key)}: {_string(item)}")
        elif kind is bool:
            parts.append(f"{_string(key)}: {'true' if item else 'false'}")
        else:
            parts.append(f"{_string(key)}: {_value(item)}")
    return f"{{{', '.join(parts)}}}"


class ResultForm:
    """What the texts of one entry's results share, written once: the entry's kind and name
    (which its results carry, unless a grader named its own), `advisory` and `weight`."""

    __slots__ = ("_head", "_kind", "_name", "_tail")

    def __init__(self, kind: str, name: str, advisory: bool, weight: float) -> None:
        self._kind: Final = kind
        self._name: Final = name
        self._head: Final = _result_head(kind, name)
        self._tail: Final = (
            f', "advisory": {_value(advisory)}, "weight": {_value(weight)}, "duration_ms": '
        )

    def text(self, result: GradeResult, duration_ms: float) -> str:
        """The text of `ResultRecord(result, advisory, weight, duration_ms).to_dict()`."""
        kind, name, passed, message = result.kind, result.name, result.passed, result.message
        details, error = result.details, result.error
        same = kind == self._kind and name == self._name
        finite = type(duration_ms) is float and math.isfinite(duration_ms)
        # The usual values written in place, the rest by `_value`: a score is a finite float
        # (`GradeResult` converts it), whose text is its repr.
        return (
            f"{self._head if same else _result_head(kind, name)}"
            f"{'true' if passed is True else 'false' if passed is False else _value(passed)}"
            f', "score": {float.__repr__(result.score)}, "message": '
            f"{_string(message) if type(message) is str else _value(message)}"
            f', "details": {"null" if details is None else _value(details)}, "error": '
            f"{'null' if error is None else _value(error)}{self._tail}"
            f"{float.__repr__(duration_ms) if finite else _value(duration_ms)}}}"
        )


def _result_head(kind: str, name: str) -> str:
    return f'{{"kind": {_value(kind)}, "name": {_value(name)}, "passed": '


def result_text(result: GradeResult, advisory: bool, weight: float, duration_ms: float) -> str:
    """The text of `ResultRecord(result, advisory, weight, duration_ms).to_dict()`."""
    form = ResultForm(result.kind, result.name, advisory, weight)
    return form.text(result, duration_ms)


def record_text(record: ResultRecord) -> str:
    """The text of `record.to_dict()`."""
    return result_text(record.result, record.advisory, record.weight, record.duration_ms)


def sample_text(sample: Sample, messages: tuple[Any, ...] | None, max_text: int) -> str:
    """The keys `SampleForm(sample, messages, max_text)` adds to its turn's JSON, each after a
    `, ` (empty when the sample holds nothing)."""
    parts = []
    value = sample.input
    if value is not None:
        parts.append(f', "input": {_cut(value, max_text)}')
    value = sample.output
    if value is not None:
        parts.append(f', "output": {_cut(value, max_text)}')
    value = sample.expected
    if value is not None:
        parts.append(f', "expected": {_cut(value, max_text)}')
    if sample.tool_calls:
        calls = ", ".join([_tool_call(call, max_text) for call in sample.tool_calls])
        parts.append(f', "tool_calls": [{calls}]')
    if messages is not None:
        parts.append(f', "messages": {_value(json_value(messages, max_text))}')
    return "".join(parts)


def _cut(value: Any, max_text: int) -> str:
    """A sample's value as its JSON form shows it (`json_value`: texts cut at `max_text`)."""
    if type(value) is str:
        return _string(cut_text(value, max_text))
    return _value(json_value(value, max_text))


def _tool_call(call: ToolCall, max_text: int) -> str:
    """The text of `tool_call_json(call, max_text)`."""
    error, turn = call.error, call.turn
    return (
        f'{{"name": {_cut(call.name, max_text)}, '
        f'"arguments": {_value(json_value(call.arguments, max_text))}, '
        f'"result": {"null" if call.result is None else _cut(call.result, max_text)}, '
        f'"error": {"null" if error is None else _cut(error, max_text)}, '
        f'"turn": {"null" if turn is None else _value(turn)}}}'
    )


def metadata_text(metadata: Mapping[str, Any], max_text: int) -> str:
    """The text of `SampleForm(metadata, None, max_text).to_dict()`."""
    return _value(json_value(metadata, max_text)) if metadata else "{}"


def turn_text(  # noqa: PLR0917 - positional like TurnReport: called once per turn
    index: int,
    passed: bool,
    score: float,
    errored: bool,
    results: Sequence[str],
    skipped: bool,
    sample: str,
) -> str:
    """The text of a `TurnReport`'s `to_dict()`, from its results' texts and its sample's
    (`sample_text`, or `""` without a sample)."""
    return (
        f'{{"index": {_value(index)}, "passed": {"true" if passed else "false"}, '
        f'"score": {_value(score)}, "errored": {"true" if errored else "false"}, '
        f'"results": [{", ".join(results)}]'
        f"{_SKIPPED if skipped else ''}{sample}}}"
    )


def case_text(  # noqa: PLR0917 - positional like CaseReport: called once per case
    name: str,
    passed: bool,
    score: float,
    turns: Sequence[str],
    errored: bool,
    error: str | None,
    duration_ms: float,
    metadata: str | None,
    tags: tuple[str, ...] = (),
    attempt: int | None = None,
) -> str:
    """The text of a `CaseReport`'s `to_dict()`, from its turns' texts and its metadata's
    (`metadata_text`, or None without one)."""
    parts = [f'{{"name": {_value(name)}']
    if attempt is not None:
        parts.append(f', "attempt": {_value(attempt)}')
    parts.append(
        f', "passed": {"true" if passed else "false"}, "score": {_value(score)}, '
        f'"errored": {"true" if errored else "false"}, '
        f'"duration_ms": {_value(duration_ms)}, "turns": [{", ".join(turns)}]'
    )
    if error is not None:
        parts.append(f', "error": {_value(error)}')
    if metadata is not None:
        parts.append(f', "metadata": {metadata}')
    if tags:
        parts.append(f', "tags": {_value(tags)}')
    parts.append("}")
    return "".join(parts)


def turn_report_text(turn: TurnReport) -> str:
    """The text of `turn.to_dict()` (a turn the batch has a report of: a skipped one)."""
    return _encode(turn.to_dict())
