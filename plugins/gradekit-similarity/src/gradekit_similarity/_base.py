"""What every similarity kind shares: the threshold option, the texts compared, the result.

The output is one text; the expected value is one reference text or a list of them. A kind
scores the output against its references (each metric has its own way to use several), and
passes when the score is >= `threshold`. An advisory entry (`advisory: true`, which gradekit
hands to these kinds) needs no threshold: it reports its score and passes.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from typing import Any, Final

import attrs
from gradekit import GradeResult, OptionError, Sample

__all__ = [
    "QUOTE_LIMIT",
    "Texts",
    "advisory_field",
    "check_threshold",
    "import_metric",
    "quote",
    "scored",
    "texts_of",
    "threshold_field",
]

QUOTE_LIMIT: Final = 60
"""Texts longer than this are cut in messages."""

THRESHOLD_HELP: Final = "passes when the score is >= this (0 to 1)"

_IMPORTS: Final = threading.Lock()


def import_metric(module: str) -> Any:
    """Import a metric library's module, one import at a time.

    The first grade of each kind imports its library, and the runner grades on several
    threads: two first imports of sacrebleu's modules at once deadlock in Python's import
    locks (sacrebleu imports itself in a cycle), so they wait for each other here instead.
    """
    with _IMPORTS:
        return importlib.import_module(module)


def check_threshold(instance: Any, attribute: attrs.Attribute[Any], value: float | None) -> None:
    """attrs validator: a threshold is a number in [0, 1], and only an advisory entry may go
    without one (attrs runs validators once every field is set, so `advisory` is known)."""
    if value is None:
        if not getattr(instance, "advisory", False):
            raise OptionError(
                attribute.name,
                "this option is required: the score at which the output passes (0 to 1); "
                "an entry with advisory: true needs none (it reports its score)",
            )
        return
    if not 0.0 <= value <= 1.0:
        raise OptionError(attribute.name, f"must be between 0 and 1, got {value!r}")


def threshold_field() -> Any:
    """The `threshold` option: required, unless the entry is advisory."""
    return attrs.field(default=None, validator=check_threshold, metadata={"help": THRESHOLD_HELP})


def advisory_field() -> Any:
    """The `advisory` option, set by gradekit from the entry's common `advisory` key."""
    return attrs.field(
        default=False,
        metadata={"help": "set from the entry's advisory key: no threshold needed"},
    )


def quote(text: str) -> str:
    """`text` quoted for a message, cut to QUOTE_LIMIT characters with an ellipsis."""
    if len(text) <= QUOTE_LIMIT:
        return repr(text)
    return repr(text[: QUOTE_LIMIT - 1] + "…")


def _scalar_text(value: Any) -> str | None:
    """A YAML scalar as text (`42` is `"42"`, `true` is `"true"`), None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return None


@attrs.frozen
class Texts:
    """The output text and the reference texts it is scored against."""

    output: str
    references: tuple[str, ...]


def _what(value: Any) -> str:
    """`a mapping`, `a list` or `a <type>`, for messages."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def _error(kind: str, name: str, message: str) -> GradeResult:
    return GradeResult.of_error(kind, name, f"ValueError: {message}", message)


def texts_of(kind: str, name: str, sample: Sample) -> Texts | GradeResult:
    """The sample's output and references, or the error result saying why they cannot be
    compared (no expected value, a mapping where text is needed...)."""
    expected = sample.expected
    if expected is None:
        return _error(
            kind,
            name,
            f"no expected value: {kind} compares the output with the expected text (or a list "
            "of reference texts); add 'expected' to the case or turn",
        )
    if isinstance(expected, (list, tuple)):
        if not expected:
            return _error(kind, name, "the expected list is empty: give at least one reference")
        references = []
        for index, item in enumerate(expected):
            text = _scalar_text(item)
            if text is None:
                return _error(
                    kind,
                    name,
                    f"expected[{index}] is {_what(item)}, not text: each reference must be a text",
                )
            references.append(text)
    else:
        text = _scalar_text(expected)
        if text is None:
            return _error(
                kind,
                name,
                f"the expected value is {_what(expected)}, not text: give a text or "
                "a list of texts",
            )
        references = [text]
    output = "" if sample.output is None else _scalar_text(sample.output)
    if output is None:
        return _error(
            kind, name, f"the output is {_what(sample.output)}, not text: {kind} compares text"
        )
    return Texts(output, tuple(references))


def scored(
    kind: str,
    name: str,
    *,
    label: str,
    score: float,
    threshold: float | None,
    texts: Texts,
    best: int | None = None,
    details: Mapping[str, Any] | None = None,
) -> GradeResult:
    """The result of a metric: passed = score >= threshold; the message names both, and on a
    failure the output and the (best) reference. Without a threshold (an advisory entry) the
    score is reported and the result passes."""
    score = min(1.0, max(0.0, float(score)))  # libraries' rounding can leave 1.0000000000000002
    passed = threshold is None or score >= threshold
    several = len(texts.references) > 1
    record: dict[str, Any] = {"score": score, "threshold": threshold}
    record["references"] = len(texts.references)
    if best is not None:
        record["best_reference"] = best
    record.update(details or {})
    if threshold is None:
        message = f"{label} {score:.4f} (advisory, no threshold: the score is reported)"
        return GradeResult(kind, name, passed, score, message, record)
    sign = ">=" if passed else "<"
    message = f"{label} {score:.4f} {sign} threshold {threshold:g}"
    if not passed:
        if not several:
            which = "reference"
        elif best is not None:
            which = "best reference"
        else:
            which = f"{len(texts.references)} references, the first"
        reference = texts.references[best or 0]
        message += f": output {quote(texts.output)}, {which} {quote(reference)}"
    return GradeResult(kind, name, passed, score, message, record)
