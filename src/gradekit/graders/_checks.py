"""Results made of checks: each check reported on its own, score = fraction passed.

Shared by the agent kinds (behavior, file, program, build): `passed` is "every check passed"
unless the grader has a `threshold`, in which case it is `score >= threshold`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from gradekit.core.errors import OptionError
from gradekit.core.types import GradeResult
from gradekit.core.values import fraction_problem

__all__ = ["Check", "checks_result", "forms_result", "validate_threshold"]


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
    # Check.to_dict(), inlined: once per check per grade.
    forms = [check.__dict__.copy() for check in checks]
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
