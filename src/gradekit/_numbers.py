"""The rules for numbers that options share, each in one place: fractions in [0, 1]."""

from __future__ import annotations

__all__ = ["fraction_problem"]


def fraction_problem(value: float) -> str | None:
    """None for a number from 0 to 1 (a threshold, a weight share); else what is wrong with
    it, worded for an error at its key. NaN is never between 0 and 1."""
    if 0.0 <= value <= 1.0:
        return None
    return f"must be between 0 and 1, got {value!r}"
