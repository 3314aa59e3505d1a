"""The contract of the `code` kind: what a user-written grader receives and may return.

A code grader is a plain Python callable, referenced from a suite as `"module:callable"`:

    from gradekit.code import GraderContext, GraderResult

    def program_equivalence(ctx: GraderContext) -> GraderResult:
        same = run(ctx.agent_response) == run(ctx.turn_config["turn_program"])
        return GraderResult(1.0 if same else 0.0, reason="same rows" if same else "differs")

It may return `True` / `False`, a number in [0, 1] or a `GraderResult`, and may be `async def`.
These names and fields are public and stable: they are never renamed or removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from gradekit.core.types import FrozenDict, Sample, ToolCall

__all__ = ["GraderContext", "GraderResult"]

# The Sample fields that are keys of a turn in the suite file, in the order they are written.
_TURN_KEYS = ("input", "output", "expected", "tool_calls", "context", "workspace")


def _turn_config(sample: Sample) -> FrozenDict[str, Any]:
    config: dict[str, Any] = {}
    for key in _TURN_KEYS:
        value = getattr(sample, key)
        if value is not None and value != ():
            config[key] = value
    config.update(sample.metadata)
    return FrozenDict(config)


@attrs.frozen
class GraderContext:
    """Everything a code grader may read about the turn it grades. Read-only, all the way down.

    - `turn_input`: the turn's `input` (None when unset).
    - `agent_response`: the turn's `output`, as written in the suite; `""` when unset.
    - `ground_truth`: the turn's `expected`; None when unset.
    - `tool_invocations`: the turn's tool calls, a tuple of `ToolCall`.
    - `retrieval_context`: the turn's `context`, a tuple, or None when unset.
    - `turn_index`: the 0-based index of the turn in its case.
    - `test_case_name`: the case's name.
    - `turn_config`: a read-only mapping of the turn's own keys: `input`, `output`,
      `expected`, `tool_calls`, `context`, `workspace` when set, plus every other key of the
      case and turn (such as `turn_program`), with the values the Sample holds.
    - `sample`: the full `Sample`, including `history` (earlier turns) and `workspace`.

    Mappings are read-only and sequences are tuples: a grader cannot change what the next
    grader sees.
    """

    turn_input: Any
    agent_response: Any
    ground_truth: Any
    tool_invocations: tuple[ToolCall, ...]
    retrieval_context: tuple[Any, ...] | None
    turn_index: int
    test_case_name: str
    turn_config: Mapping[str, Any]
    sample: Sample

    @classmethod
    def from_sample(cls, sample: Sample) -> GraderContext:
        """The context a code grader receives for `sample`."""
        return cls(
            turn_input=sample.input,
            agent_response="" if sample.output is None else sample.output,
            ground_truth=sample.expected,
            tool_invocations=sample.tool_calls,
            retrieval_context=sample.context,
            turn_index=sample.turn,
            test_case_name=sample.case,
            turn_config=_turn_config(sample),
            sample=sample,
        )


@attrs.frozen
class GraderResult:
    """What a code grader may return when a bare bool or number is not enough.

    - `score`: a finite number in [0, 1] (checked after the grader returns: a NaN or a score
      outside [0, 1] gives an error result, it is never clamped).
    - `passed`: True or False to decide the verdict explicitly; None (the default) derives it
      from the score: `score >= threshold` when the entry sets `threshold`, else
      `score >= 0.5`.
    - `reason`: a short text shown as the result's message.
    - `details`: a dict of strict JSON values (dict, list, str, int, float, bool, None; no
      NaN or infinity, no cycles), shown on the result in the report.
    """

    score: float
    passed: bool | None = None
    reason: str | None = None
    details: Mapping[str, Any] | None = None
