"""A result's `details` as a report shows them: bounded as the sample is.

Every text inside a result's details, at any depth (a composite's or a pack's children in
`details.results` included, keys too), is cut at the report's bound (`--max-text`, default
4096 bytes of UTF-8) with the marker of `samples.cut_text`. With `--no-samples` the bound is
the default one, and the keys where gradekit's own kinds copy the sample's texts
(`SAMPLE_COPIES`: equality's `output` and `expected`, a regex's match...) are left out, so the
report carries the verdicts and none of the texts graded. Details with nothing to cut or drop
are the grader's own object, unchanged: the report is byte for byte what it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gradekit.core.types import FrozenDict, GradeResult
from gradekit.report.model import ResultRecord
from gradekit.report.samples import MAX_TEXT, cut_text

__all__ = ["SAMPLE_COPIES", "bounded_record", "bounded_result"]

SAMPLE_COPIES: Final[Mapping[str, frozenset[str]]] = {
    "equality": frozenset(("output", "expected")),
    "numeric": frozenset(("output", "expected")),
    "regex": frozenset(("match", "groups", "named")),
    "json": frozenset(("difference",)),
}
"""The keys of the details of gradekit's own kinds that hold the sample's texts (or parts of
them): left out of a report without samples."""


def bounded_result(result: GradeResult, max_text: int | None) -> GradeResult:
    """`result` with its details as a report shows them (see the module): `max_text` the
    report's bound, None for a report without samples. `result` itself when nothing changes."""
    details = result.details
    if details is None:
        return result
    if max_text is None:
        shown = _without_copies(result.kind, details)
        if not _fits(shown, MAX_TEXT // 4):
            shown = _bounded(shown, MAX_TEXT)
    elif _fits(details, max_text // 4):  # the usual: short texts, nothing to build
        return result
    else:
        shown = _bounded(details, max_text)
    if shown is details:
        return result
    return GradeResult(
        result.kind,
        result.name,
        result.passed,
        result.score,
        result.message,
        shown,
        result.error,
        result.duration_ms,
    )


def bounded_record(record: ResultRecord, max_text: int | None) -> ResultRecord:
    """`record` with its result's details bounded (`bounded_result`); itself when unchanged."""
    result = bounded_result(record.result, max_text)
    if result is record.result:
        return record
    return ResultRecord(result, record.advisory, record.weight, record.duration_ms)


_PLAIN: Final = frozenset((int, float, bool, type(None)))


def _fits(value: Any, limit: int) -> bool:
    """True when no text in `value` is longer than `limit` characters (so none is longer
    than 4 * `limit` bytes): a walk that builds nothing, for the details of nearly every
    grade. False says only that `_bounded` must look."""
    kind = type(value)
    if kind is str:
        return len(value) <= limit
    if kind is FrozenDict or kind is dict or isinstance(value, Mapping):
        for key, item in value.items():
            if type(key) is str and len(key) > limit:
                return False
            item_kind = type(item)
            if item_kind is str:
                if len(item) > limit:
                    return False
            elif item_kind not in _PLAIN and not _fits(item, limit):
                return False
        return True
    if kind is tuple or kind is list:
        for item in value:
            item_kind = type(item)
            if item_kind is str:
                if len(item) > limit:
                    return False
            elif item_kind not in _PLAIN and not _fits(item, limit):
                return False
        return True
    return True


def _bounded(value: Any, bound: int) -> Any:
    """`value` with each text in it cut at `bound`; `value` itself when none is cut."""
    kind = type(value)
    if kind is str:
        return cut_text(value, bound)
    if isinstance(value, Mapping):
        changed = False
        shown: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = cut_text(key, bound) if type(key) is str else key
            new_item = _bounded(item, bound)
            changed = changed or new_key is not key or new_item is not item
            shown[new_key] = new_item
        return shown if changed else value
    if isinstance(value, (list, tuple)):
        items = [_bounded(item, bound) for item in value]
        if any(new is not old for new, old in zip(items, value, strict=True)):
            return items
        return value
    return value


def _without_copies(kind: str, details: Mapping[str, Any]) -> Mapping[str, Any]:
    """`details` without the keys where `kind` copies the sample's texts, and likewise for
    each child result in `details.results` (composites, packs); itself when nothing goes."""
    copies = SAMPLE_COPIES.get(kind)
    shown: Mapping[str, Any] = details
    if copies is not None and not copies.isdisjoint(details):
        shown = {key: item for key, item in details.items() if key not in copies}
    children = shown.get("results")
    if isinstance(children, (list, tuple)):
        kept = [_child_without_copies(child) for child in children]
        if any(new is not old for new, old in zip(kept, children, strict=True)):
            shown = {**shown, "results": kept}
    return shown


def _child_without_copies(child: Any) -> Any:
    if not isinstance(child, Mapping):
        return child
    kind, details = child.get("kind"), child.get("details")
    if not isinstance(kind, str) or not isinstance(details, Mapping):
        return child
    shown = _without_copies(kind, details)
    return child if shown is details else {**child, "details": shown}
