"""The kit's strategies give what they promise, and reach the awkward cases they name."""

from __future__ import annotations

import os
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import find as hypothesis_find
from hypothesis import strategies as st

from gradekit import GradeResult, Registry, Sample, ToolCall
from gradekit.core.values import json_problem
from gradekit.registry.entries import build_entry
from gradekit.testing import (
    grade_results,
    grader_entries,
    numbers_as_text,
    samples,
    texts,
    tool_calls,
)
from gradekit.testing._strategies import HUGE_TEXT_SIZE

# hypothesis warns when it writes out a found example of 100,000 characters.
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")


def find(strategy: st.SearchStrategy[Any], condition: Any) -> Any:
    """An example satisfying `condition` (the first found: reaching it is the point)."""
    quick = settings(database=None, max_examples=1000, phases=[Phase.generate])
    return hypothesis_find(strategy, condition, settings=quick)


@given(samples(require_expected=True, require_tool_calls=True, require_history=True))
def test_required_parts_are_always_there(sample: Sample) -> None:
    assert sample.expected is not None
    assert sample.tool_calls and all(isinstance(call, ToolCall) for call in sample.tool_calls)
    assert sample.history
    assert [turn.turn for turn in sample.history] == list(range(len(sample.history)))
    assert {turn.case for turn in sample.history} == {sample.case}
    assert sample.turn == len(sample.history)


@given(samples(require_workspace=True))
def test_a_required_workspace_is_a_real_folder(sample: Sample) -> None:
    assert sample.workspace is not None
    assert os.path.isabs(sample.workspace) and os.path.isdir(sample.workspace)


def test_optional_parts_come_and_go() -> None:
    for present in [
        lambda s: s.expected is None,
        lambda s: s.expected is not None and s.expected == s.output,
        lambda s: isinstance(s.output, str) and s.expected not in (None, s.output),
        lambda s: s.workspace is not None and os.listdir(s.workspace),
        lambda s: s.workspace is None,
        lambda s: bool(s.history),
        lambda s: bool(s.tool_calls),
        lambda s: s.context is not None,
        lambda s: bool(s.metadata),
        lambda s: not isinstance(s.output, str),
    ]:
        assert isinstance(find(samples(), present), Sample)


def _mixes_forms(text: str) -> bool:
    return any(unicodedata.normalize(form, text) != text for form in ("NFC", "NFD")) and (
        unicodedata.normalize("NFC", text) != unicodedata.normalize("NFD", text)
    )


def test_texts_reach_every_awkward_kind_of_text() -> None:
    assert find(texts(), lambda t: t == "") == ""
    assert len(find(texts(), lambda t: len(t) >= HUGE_TEXT_SIZE)) >= HUGE_TEXT_SIZE
    control = find(texts(), lambda t: any(unicodedata.category(c) == "Cc" for c in t))
    assert control
    assert find(texts(), lambda t: bool(t) and t.isspace())
    assert _mixes_forms(find(texts(), _mixes_forms))
    assert find(texts(), lambda t: len(t.split()) > len(set(t.split())) < 4)
    assert all(len(text) < HUGE_TEXT_SIZE for text in _many(texts(huge=False)))


def _many(strategy: st.SearchStrategy[Any], count: int = 200) -> list[Any]:
    drawn: list[Any] = []

    @given(strategy)
    def draw(value: Any) -> None:
        drawn.append(value)

    draw()
    return drawn[:count]


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def test_numbers_as_text_reach_every_way_of_writing_a_number() -> None:
    for written in [
        lambda t: t.rstrip().endswith("%"),
        lambda t: "e" in t.lower() and _decimal(t) is not None,
        lambda t: "," in t.strip(",") and any(c.isdigit() for c in t),
        lambda t: "\u00a0" in t or "\u202f" in t,
        lambda t: t.startswith("+") and _decimal(t) is not None,
        lambda t: t.startswith("\u2212"),
        lambda t: "." in t and _decimal(t) is not None,
        lambda t: t.lower() in {"nan", "inf", "-infinity"},
        lambda t: any(c.isdigit() and not c.isascii() for c in t),
        lambda t: t != t.strip(),
        lambda t: t.isdigit() and len(t) > 3,
    ]:
        assert isinstance(find(numbers_as_text(), written), str)


@given(grade_results())
def test_grade_results_are_valid_results(result: GradeResult) -> None:
    assert isinstance(result, GradeResult)
    assert json_problem(result.details) is None
    assert (result.error is None) or (not result.passed and result.score == 0.0)


def test_grade_results_are_passes_fails_and_errors_of_the_kind_asked() -> None:
    for outcome in ("pass", "fail", "error"):
        assert find(grade_results(), lambda r, o=outcome: r.outcome == o).outcome == outcome
    result = find(grade_results(kind="acme.rouge", name="rouge"), lambda r: True)
    assert (result.kind, result.name) == ("acme.rouge", "rouge")


@given(tool_calls())
def test_tool_calls_have_json_arguments(call: ToolCall) -> None:
    assert isinstance(call.name, str)
    assert json_problem(dict(call.arguments)) is None


@given(grader_entries())
def test_grader_entries_are_valid_suite_entries(entry: dict[str, Any]) -> None:
    built = build_entry(entry)
    if entry.get("enabled", True):
        assert built is not None and built.kind == entry["kind"]
        assert built.name == entry.get("name", entry["kind"])
    else:
        assert built is None


@given(
    grader_entries(
        kinds=st.just("contains"),
        options=st.fixed_dictionaries({"values": st.lists(st.text(min_size=1), min_size=1)}),
    )
)
def test_grader_entries_take_a_kind_and_its_options(entry: dict[str, Any]) -> None:
    built = build_entry(entry, registry=Registry())
    assert built is None or (built.kind == "contains" and built.config["values"])
