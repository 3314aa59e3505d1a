"""Many attempts at one case: a suite file's `attempts:` and a dataset's `attempt` index.

A case of a suite file may give `attempts:`, a list of what the agent produced in each of
several tries at the same task; each attempt becomes a Case of its own (the same name, its
`attempt` index from 0), graded like any case, so the report can give pass@k per case. An
attempt is the output of a single-turn case (any value that is not a mapping), or a mapping
with `output` / `tool_calls` (single-turn), `turns`, or `messages` (a transcript), and an
optional `metadata`. The case's other fields (input, expected, graders, policy, tags...) are
shared by every attempt.

In a dataset, each line is one attempt: lines with the same name each give `attempt: N`,
numbered 0, 1, 2 ... in file order (`gradekit.suite.dataset.DatasetAttempts` checks them as
the lines stream by).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

from gradekit._errors import Problem
from gradekit.suite.cases import CaseBuilder
from gradekit.suite.dataset import EntryCache
from gradekit.suite.model import Case
from gradekit.suite.parse import KeyPath, describe

__all__ = ["ATTEMPT_FIELDS", "build_with_attempts"]

ATTEMPT_FIELDS: Final = ("output", "tool_calls", "turns", "messages", "messages_format", "metadata")
"""What one attempt of a suite file's `attempts:` may give (as a mapping)."""
_PER_ATTEMPT: Final = ("output", "tool_calls", "turns", "messages")


def build_with_attempts(
    builder: CaseBuilder,
    raw: Any,
    *,
    name: str,
    base: KeyPath,
    locate: Callable[[KeyPath], str | None],
    warnings: list[Problem] | None = None,
) -> tuple[list[Case], list[Problem]]:
    """The cases of the suite file's case `raw` at `base`: one per attempt when it gives
    `attempts:`, else the case itself; and every problem found. `locate(path)` is the
    `file:line:column` of a path (each attempt's case is located at its attempt)."""
    if not isinstance(raw, dict) or "attempts" not in raw:
        case, found = builder.build(
            raw, name=name, base=base, location=locate(base), warnings=warnings
        )
        return ([] if case is None else [case]), found
    problems: list[Problem] = []
    attempts = raw["attempts"]
    if not isinstance(attempts, list) or not attempts:
        problems.append(
            Problem(
                (*base, "attempts"),
                f"expected a non-empty list of attempts, got {describe(attempts)}",
            )
        )
        return [], problems
    for key in _PER_ATTEMPT:
        if key in raw:
            problems.append(
                Problem(
                    (*base, key),
                    f"a case with 'attempts' gives '{key}' in each attempt; move it there",
                    key=True,
                )
            )
    # The other problems of the case are still found, in its attempts.
    shared = {key: value for key, value in raw.items() if key not in ("attempts", *_PER_ATTEMPT)}
    # The case's graders are created once and shared by its attempts.
    builder = attrs.evolve(builder, make_entry=EntryCache(builder.make_entry))
    cases: list[Case] = []
    for index, item in enumerate(attempts):
        path = (*base, "attempts", index)
        fields = _fields(item, path, problems)
        if fields is None:
            continue
        built, found = builder.build(
            {**shared, **fields},
            name=name,
            base=base,
            location=locate(path),
            warnings=warnings if index == 0 else None,
        )
        own = path if isinstance(item, dict) else None
        for problem in found:
            moved = _moved(problem, base, fields, own, path)
            if moved not in problems:
                problems.append(moved)
        if built is not None:
            cases.append(attrs.evolve(built, attempt=index))
    return ([] if problems else cases), problems


def _fields(item: Any, path: KeyPath, problems: list[Problem]) -> dict[str, Any] | None:
    """The case fields attempt `item` gives: a mapping's own, or `output` for a bare value."""
    if not isinstance(item, dict):
        return {"output": item}
    unknown = [key for key in item if key not in ATTEMPT_FIELDS]
    for key in unknown:
        problems.append(
            Problem(
                (*path, key),
                f"unknown key '{key}' in an attempt; an attempt gives "
                + ", ".join(f"'{field}'" for field in ATTEMPT_FIELDS)
                + " (the case gives everything its attempts share; an output that is a "
                "mapping is written `output: {...}`)",
                key=True,
            )
        )
    if unknown:
        return None
    if not any(key in item for key in _PER_ATTEMPT):
        problems.append(
            Problem(path, "an attempt gives 'output', 'tool_calls', 'turns' or 'messages'")
        )
        return None
    return dict(item)


def _moved(
    problem: Problem, base: KeyPath, fields: dict[str, Any], own: KeyPath | None, path: KeyPath
) -> Problem:
    """`problem`, found in the case built from the attempt's fields over the case's, moved
    to the attempt when it is about a field the attempt gave."""
    inside = problem.path[len(base) :]
    if problem.path[: len(base)] != base or not inside or inside[0] not in fields:
        return problem
    if own is None:  # a bare output: the attempt is the value itself
        return attrs.evolve(problem, path=path, key=False)
    return attrs.evolve(problem, path=(*own, *inside))
