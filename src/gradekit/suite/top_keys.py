"""The suite file's own keys: which there are, and the plain ones read at the top (`name`,
`description`, `timeout`, `sandbox`), each problem added to the loader's list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gradekit._errors import Problem
from gradekit._hints import did_you_mean
from gradekit._peers import peer_field
from gradekit._seconds import seconds_problem, yaml_seconds
from gradekit.suite.parse import describe

__all__ = [
    "DEFAULT_TIMEOUT",
    "TOP_LEVEL_KEYS",
    "check_keys",
    "sandbox_key",
    "text_key",
    "timeout_key",
]

TOP_LEVEL_KEYS: Final = (
    "name",
    "description",
    "policy",
    "threshold",
    "timeout",
    "graders",
    "cases",
    "dataset",
    "traces",
    "sandbox",
    "tags",
)
DEFAULT_TIMEOUT: Final = 60.0
"""The suite's grader timeout in seconds when it sets none."""


def check_keys(data: Mapping[str, Any], problems: list[Problem]) -> None:
    """Unknown top-level keys are errors (with a did-you-mean)."""
    for key in data:
        if key in TOP_LEVEL_KEYS:
            continue
        hint = did_you_mean(str(key), TOP_LEVEL_KEYS)
        peer = peer_field(key)
        suffix = f" ({hint})" if hint else f" (did you mean '{peer}'?)" if peer else ""
        message = f"unknown top-level key '{key}'{suffix}; a suite has " + ", ".join(TOP_LEVEL_KEYS)
        problems.append(Problem((key,), message, key=True))


def text_key(
    data: Mapping[str, Any], key: str, default: str | None, problems: list[Problem]
) -> str | None:
    """A string-valued top-level key."""
    value = data.get(key, default)
    if value is not None and not isinstance(value, str):
        problems.append(Problem((key,), f"expected a string, got {describe(value)}"))
        return default
    return value


def timeout_key(data: Mapping[str, Any], problems: list[Problem]) -> float:
    """The suite's default grader timeout in seconds."""
    value = yaml_seconds(data.get("timeout", DEFAULT_TIMEOUT))
    problem = seconds_problem(value)
    if problem is not None:
        problems.append(Problem(("timeout",), problem))
        return DEFAULT_TIMEOUT
    return float(value)


def sandbox_key(data: Mapping[str, Any], problems: list[Problem]) -> str | None:
    """The suite's `sandbox:` for agent code (auto, bwrap, none), None when unset."""
    from gradekit.process.bubblewrap import check_mode, requested_problem

    value = data.get("sandbox")
    problem = check_mode(value) or requested_problem(value)
    if problem is not None:
        problems.append(Problem(("sandbox",), problem))
        return None
    return value
