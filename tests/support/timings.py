"""What differs from run to run in a report's JSON form, taken out so that runs compare."""

from __future__ import annotations

from typing import Any


def without_durations(value: Any) -> Any:
    """`value` (a report's JSON form, or any part of it) without its measured durations."""
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [without_durations(item) for item in value]
    return value
