"""How the built-in kinds make their results: the texts they compare, quoting, and
results made of checks (`Check`, `checks_result`).

Text kinds (contains, equality, regex, numeric, json): the compared texts and quoting.

Results made of checks, shared by the agent kinds (behavior, file, program, build, lint): each
check reported on its own, score = fraction passed; `passed` is "every check passed" unless
the grader has a `threshold`, in which case it is `score >= threshold`.

Imports the core only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from gradekit.core.errors import OptionError
from gradekit.core.types import GradeResult, Sample, as_text
from gradekit.core.values import fraction_problem, seconds_problem

__all__ = [
    "QUOTE_LIMIT",
    "Check",
    "checks_result",
    "compared_texts",
    "data_error",
    "expected_missing",
    "forms_result",
    "output_not_text",
    "quote",
    "rebuilt",
    "text_of",
    "timeout_seconds",
    "validate_threshold",
]

_SCALARS: Final = frozenset({str, int, float, bool, type(None)})

QUOTE_LIMIT: Final = 60
"""Texts longer than this are cut in messages (details keep the whole text)."""


def quote(text: str) -> str:
    """`text` quoted for a message, cut to QUOTE_LIMIT characters with an ellipsis."""
    if len(text) <= QUOTE_LIMIT:
        return repr(text)
    return repr(text[: QUOTE_LIMIT - 1] + "…")


def _shape(value: Any) -> str | None:
    """`mapping` or `list` for a structured YAML value, None for a scalar."""
    if type(value) in _SCALARS:  # the usual values, without the ABC checks below
        return None
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, (tuple, list, set, frozenset)):
        return "list"
    return None


def text_of(value: Any) -> str | None:
    """The text a text kind compares: a YAML scalar as its text, None for a mapping or list."""
    if type(value) is str:
        return value
    return None if _shape(value) else as_text(value)


def data_error(
    kind: str, name: str, message: str, details: Mapping[str, Any] | None = None
) -> GradeResult:
    """An error result for data the grader cannot grade: not a failure, an error."""
    return GradeResult.of_error(kind, name, f"ValueError: {message}", message, details)


def expected_missing(kind: str, name: str) -> GradeResult:
    """The error result of a kind that needs an expected value and the sample has none."""
    return data_error(
        kind,
        name,
        f"no expected value: {kind} compares the output with the sample's expected value; "
        "add 'expected' to the case or turn",
    )


def compared_texts(kind: str, name: str, sample: Sample) -> tuple[str, str] | GradeResult:
    """(output text, expected text), or the error result when either cannot be compared.

    The slow path of the text kinds: their `grade` handles two plain strings inline.
    """
    expected = sample.expected
    if expected is None:
        return expected_missing(kind, name)
    shape = _shape(expected)
    if shape:
        return data_error(
            kind,
            name,
            f"the expected value is a {shape}, not text: {kind} compares text; give a single "
            "value, or use the json kind with equals_expected: true",
        )
    output = text_of(sample.output)
    if output is None:
        return output_not_text(kind, name, sample.output)
    return output, as_text(expected)


def output_not_text(kind: str, name: str, output: Any) -> GradeResult:
    """The error result for an output that is a mapping or a list, not text."""
    return data_error(
        kind,
        name,
        f"the output is a {_shape(output)}, not text: {kind} compares text; "
        "use the json kind to grade structured output",
    )


def rebuilt(grader: Any) -> tuple[Any, tuple[Any, ...]]:
    """A `__reduce__` value that pickles a grader as its options and builds it again.

    For graders whose derived fields (a closure, a schema validator; private or `init=False`)
    cannot be pickled but are derived from the options.
    """
    options = {
        field.name: getattr(grader, field.name)
        for field in attrs.fields(type(grader))
        if field.init and not field.name.startswith("_")
    }
    return (_build, (type(grader), options))


def _build(cls: type, options: dict[str, Any]) -> Any:
    return cls(**options)


@attrs.frozen(slots=False)  # a dict class: built faster, one per check per grade
class Check:
    """One check: what was checked, whether it held, and what was found."""

    name: str
    passed: bool
    message: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form listed in `details.checks`."""
        # A dict class: its __dict__ is exactly the three fields, in this order.
        return self.__dict__.copy()


def checks_result(
    kind: str,
    name: str,
    checks: Iterable[Check],
    *,
    threshold: float | None = None,
    details: Mapping[str, Any] | None = None,
    message: str | None = None,
) -> GradeResult:
    """A result from `checks`: score = fraction passed; the message (unless given) counts
    the checks and names the failed ones."""
    forms = [check.to_dict() for check in checks]
    return forms_result(kind, name, forms, threshold=threshold, details=details, message=message)


def forms_result(
    kind: str,
    name: str,
    forms: list[dict[str, Any]],
    *,
    threshold: float | None = None,
    details: Mapping[str, Any] | None = None,
    message: str | None = None,
) -> GradeResult:
    """`checks_result` for checks given in their JSON form (`{"name", "passed", "message"}`,
    what `Check.to_dict` gives), each made for this result: it becomes part of the details.
    For a grader that builds its usual checks straight as forms (`behavior`)."""
    failed = [form for form in forms if not form["passed"]]
    total = len(forms)
    passed_count = total - len(failed)
    score = passed_count / total if total else 1.0
    passed = score >= threshold if threshold is not None else not failed
    if message is None:
        message = f"{passed_count}/{total} checks passed"
        if len(failed) == 1:  # the usual failure: one check, without a join
            message += f"; failed: {failed[0]['name']}: {failed[0]['message']}"
        elif failed:
            message += "; failed: " + "; ".join([f"{f['name']}: {f['message']}" for f in failed])
    entries: dict[str, Any] = {"checks": forms}
    if details:
        entries.update(details)
    return GradeResult(kind, name, passed, score, message, entries)


def validate_threshold(_: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    """attrs validator: a threshold is a fraction in [0, 1] (or None)."""
    problem = None if value is None else fraction_problem(value)
    if problem is not None:
        raise OptionError(attribute.name, problem)


def timeout_seconds(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """attrs validator: a timeout gradekit accepts (the one rule, in `gradekit.core.values`)."""
    problem = seconds_problem(value)
    if problem is not None:
        raise OptionError(attribute.name, problem)
