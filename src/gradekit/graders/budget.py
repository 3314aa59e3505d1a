"""The `budget` kind: the agent kept within its limits of tokens, time, tool calls and failed
spans.

Figures are read from the sample's `metadata.trace` (what `traces:` gives each sample: the
whole trace's figures), else from plain metadata keys of the same names (cases written by
hand). A limit whose figure the sample does not carry is an error result naming it, never a
pass. The score is the fraction of limits kept; the grader passes when every one is kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import attrs

from gradekit.core.errors import OptionError
from gradekit.core.types import GradeResult, Sample, bounded

__all__ = ["Budget"]

LIMITS: Final = (
    "max_input_tokens",
    "max_output_tokens",
    "max_total_tokens",
    "max_duration",
    "max_tool_calls",
    "max_error_spans",
)
_FIGURES: Final = {
    "max_input_tokens": "input_tokens",
    "max_output_tokens": "output_tokens",
    "max_total_tokens": "total_tokens",
    "max_duration": "duration_ms",
    "max_error_spans": "error_spans",
}
"""The figure each limit reads (max_tool_calls counts the sample's tool calls instead)."""


def _limit(name: str) -> Any:
    def check(instance: Any, attribute: Any, value: Any) -> None:
        if value is None:
            return
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (math.isfinite(value) and value >= 0)
        ):
            raise OptionError(name, f"{name} must be a number >= 0, got {value!r}")

    return attrs.field(kw_only=True, default=None, validator=check)


@attrs.frozen
class Budget:
    """Passes when every limit given is kept: tokens (`max_input_tokens`, `max_output_tokens`,
    `max_total_tokens`), `max_duration` in seconds, `max_tool_calls` (the tool calls of the
    conversation up to this turn) and `max_error_spans` (spans whose status is ERROR)."""

    kind: ClassVar[str] = "budget"
    inline: ClassVar[bool] = True
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"max_total_tokens": 4000, "max_duration": 30},
        {"max_tool_calls": 5, "max_error_spans": 0},
    )

    name: str = attrs.field(kw_only=True, default="budget")
    max_input_tokens: float | None = _limit("max_input_tokens")
    """The most tokens sent to the model."""
    max_output_tokens: float | None = _limit("max_output_tokens")
    """The most tokens the model wrote."""
    max_total_tokens: float | None = _limit("max_total_tokens")
    """The most tokens in and out together."""
    max_duration: float | None = _limit("max_duration")
    """The most seconds the sample took."""
    max_tool_calls: float | None = _limit("max_tool_calls")
    """The most tool calls, up to and including the graded turn."""
    max_error_spans: float | None = _limit("max_error_spans")
    """The most trace spans whose status is ERROR."""

    def __attrs_post_init__(self) -> None:
        if all(getattr(self, limit) is None for limit in LIMITS):
            raise OptionError(
                "max_total_tokens",
                "budget needs at least one limit: " + ", ".join(LIMITS),
            )

    @bounded
    def grade(self, sample: Sample) -> GradeResult:
        """Check each limit given against the sample's figures."""
        checks: list[dict[str, Any]] = []
        missing: list[str] = []
        for limit in LIMITS:
            allowed = getattr(self, limit)
            if allowed is None:
                continue
            used = self._used(limit, sample)
            if used is None:
                missing.append(limit)
                continue
            if limit == "max_duration":
                used = used / 1000
            checks.append(
                {"limit": limit, "allowed": allowed, "used": used, "kept": used <= allowed}
            )
        if missing:
            names = ", ".join(
                f"{_FIGURES.get(limit, 'tool_calls')} (for {limit})" for limit in missing
            )
            message = (
                f"the sample does not carry {names}: not in metadata.trace nor in its "
                "metadata; grade traces read with `traces:`, or write the figures in the "
                "case's metadata"
            )
            return GradeResult.of_error(
                self.kind, self.name, f"ValueError: {message}", message, {"checks": checks}
            )
        kept = [check for check in checks if check["kept"]]
        broken = [
            f"{check['limit'][4:]} {_shown(check['used'])} > {_shown(check['allowed'])}"
            for check in checks
            if not check["kept"]
        ]
        message = f"kept {len(kept)} of {len(checks)} limits" + (
            ": " + ", ".join(broken) if broken else ""
        )
        return GradeResult(
            self.kind,
            self.name,
            not broken,
            len(kept) / len(checks),
            message,
            {"checks": checks},
        )

    def _used(self, limit: str, sample: Sample) -> float | None:
        if limit == "max_tool_calls":
            return float(
                sum(len(turn.tool_calls) for turn in sample.history) + len(sample.tool_calls)
            )
        metadata: Mapping[str, Any] = sample.metadata or {}
        trace = metadata.get("trace")
        sources = [trace, metadata] if isinstance(trace, Mapping) else [metadata]
        for source in sources:
            if limit == "max_total_tokens":
                total = _number(source.get("total_tokens"))
                if total is None:
                    given = (
                        _number(source.get("input_tokens")),
                        _number(source.get("output_tokens")),
                    )
                    if None not in given:
                        total = sum(value for value in given if value is not None)
            else:
                total = _number(source.get(_FIGURES[limit]))
            if total is not None:
                return total
        return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value


def _shown(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
