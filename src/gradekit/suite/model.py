"""The suite as loaded: its cases, their turns and the policy that combines results.

The suite loader builds `Suite` / `Case` / `Turn` (each turn holding its `GraderEntry`s, from
`gradekit.registry.entries`); the runner grades them. Plain, frozen data: the logic lives in
the loader and the runner."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

import attrs

from gradekit.core.types import EMPTY, FrozenDict, Sample, freeze
from gradekit.core.values import written
from gradekit.registry.entries import GraderEntry

__all__ = ["Case", "Policy", "PolicyMode", "Suite", "Turn", "entries_of"]


PolicyMode = Literal["all", "any", "weighted"]


@attrs.frozen
class Policy:
    """How results combine into a verdict: `all`, `any`, or `weighted` with a threshold."""

    mode: PolicyMode = "all"
    threshold: float | None = None


@attrs.frozen
class Turn:
    """One turn of a case: the sample to grade and every grader that applies to it
    (suite-level, then case-level, then turn-level entries). `messages`: for a turn derived
    from a transcript, its messages (from its user message to the next; the first turn's
    start with the system messages before it), frozen; reports show them."""

    sample: Sample
    graders: tuple[GraderEntry, ...]
    messages: tuple[Any, ...] | None = attrs.field(default=None, converter=freeze)


@attrs.frozen
class Case:
    """One case of a suite: its turns, graded in order, and its policy (None: the suite's).

    `name` is kept as files hold it (`gradekit.core.values.written`: U+FFFD for a lone surrogate),
    so a run finds its cases in the logs and reports of earlier runs. `error` is set for a case
    that could not be loaded (a malformed dataset line); such a case
    has no turns and is reported as errored. `metadata`: the case's own metadata (its other
    keys and its `metadata:` mapping; each turn's sample also has its turn's), frozen.
    `tags`: the suite's `tags:`, then the case's own
    (what `--select tag:NAME` reads; the report carries them). `attempt`: the index (from 0)
    of this attempt among the case's `attempts:` (or dataset lines of its name), None for a
    case of one attempt (see docs/suite-file.md, "Many attempts and pass@k").
    """

    name: str = attrs.field(converter=written)
    turns: tuple[Turn, ...]
    policy: Policy | None = None
    location: str | None = None
    error: str | None = None
    metadata: FrozenDict[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    tags: tuple[str, ...] = ()
    attempt: int | None = None


@attrs.frozen
class Suite:
    """A loaded, validated suite. `cases()` streams the cases (datasets are never read whole);
    `case_count` is the number of cases when known without reading everything; `sandbox` is the
    suite's `sandbox:` (None when it sets none). `warnings` are what the loader noticed but
    accepted (`file:line:column: message` each); dataset lines add theirs while they are read."""

    name: str
    cases: Callable[[], Iterator[Case]]
    graders: tuple[GraderEntry, ...] = ()
    policy: Policy = Policy()
    path: str | None = None
    timeout: float = 60.0
    case_count: int | None = None
    sandbox: str | None = None
    warnings: Sequence[str] = ()
    dataset: str | None = None
    """The path of the `dataset:` file, None without one."""
    entries: tuple[GraderEntry, ...] | None = None
    """Every grader entry of the suite known once it is loaded (its `graders:` and those of
    its file's cases), each once; None when entries may come later, made as the cases are read
    (dataset lines or traces of listed cases giving graders of their own), or unknown (a suite
    made in code). `gradekit run` reads it to know whether a grader may hold the GIL."""


def entries_of(graders: tuple[GraderEntry, ...], cases: Sequence[Case]) -> tuple[GraderEntry, ...]:
    """`graders` and the entries of `cases` (turn by turn), each entry object once: a loaded
    suite's `entries`."""
    seen: dict[int, GraderEntry] = {id(entry): entry for entry in graders}
    for case in cases:
        for turn in case.turns:
            for entry in turn.graders:
                seen.setdefault(id(entry), entry)
    return tuple(seen.values())
