"""The one rule for a timeout: a finite number of seconds > 0, at most a day.

Every timeout gradekit takes goes through `seconds_problem` / `seconds`: a suite's and a grader
entry's `timeout`, the `timeout` option of the process-running kinds, `GraderDefaults(timeout=)`,
`grade(timeout=)`, a `GraderEntry` made in Python, and `--timeout`. NaN compares false with
everything, so a check such as `value <= 0` lets it through and the timeout never fires; the
upper bound keeps every clock and wait call gradekit makes within what it can represent.
"""

from __future__ import annotations

from typing import Any, Final

from gradekit._errors import ConfigError
from gradekit._numbers import number_of

__all__ = ["MAX_SECONDS", "seconds", "seconds_problem", "yaml_seconds"]

MAX_SECONDS: Final = 86_400.0
"""The longest timeout, in seconds (a day): a grade that runs longer has hung."""


def _shown(value: Any) -> str:
    """`value` for the message; an int too long to print (or to read) is described instead."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a whole number of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def seconds_problem(value: Any) -> str | None:
    """Why `value` is not a timeout (a message for the user), or None when it is one."""
    valid = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and 0 < value <= MAX_SECONDS  # false for NaN, and exact for ints of any size
    )
    if valid:
        return None
    limit = f"{MAX_SECONDS:g}"
    return f"expected a finite number of seconds > 0 and at most {limit}, got {_shown(value)}"


def seconds(value: Any) -> float:
    """`value` as a timeout in seconds; ConfigError (a ValueError) when it is not one."""
    problem = seconds_problem(value)
    if problem is not None:
        raise ConfigError(f"timeout: {problem}")
    return float(value)


def yaml_seconds(value: Any) -> Any:
    """A suite file's timeout written as numeric text (`1e2`, which YAML 1.1 reads as text,
    or `'10'`) as its number, as a kind's options read numbers; any other value as it is,
    for `seconds_problem` to judge."""
    if isinstance(value, str):
        try:
            number = number_of(value)
        except OverflowError:  # `1e999`: judged as the text it is, not as infinity
            return value
        if number is not None:
            return number
    return value
