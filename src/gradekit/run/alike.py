"""Turns alike: how a batch applies the verdict rules and the summary's counts once for many
turns.

Two turns graded under the same policy by entries alike in everything the rules read of them
(name, `advisory`, `weight`, `fail_on_error`), whose results are alike in everything the rules
read of them (`likeness`: errored, passed, score), get the same decision and count the same.
Fast graders' turns come in few such groups (scores of 0 and 1), so a batch decides each group
once and counts it once, with its number of turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from gradekit._types import GradeResult
from gradekit.registry.entries import GraderEntry
from gradekit.report.summary import SummaryBuilder
from gradekit.run.verdict import Decision, Likeness, TurnDecisions, likeness, tally
from gradekit.suite.model import Policy

__all__ = ["GROUPS", "Alikes", "TurnsAlike"]


GROUPS: Final = 256
"""Distinct likenesses grouped per `TurnsAlike`; past it, each turn is decided and counted on
its own."""


EntriesKey = tuple[tuple[str, bool, float, bool], ...]
"""What the rules read of a turn's entries, entry by entry: name (the summary counts by it),
`advisory`, `weight`, `fail_on_error` (see `gradekit.run.verdict.EntryKeys`)."""


def entries_key(entries: Sequence[GraderEntry]) -> EntriesKey:
    """What the rules read of `entries` (see `EntriesKey`)."""
    return tuple([(e.name, e.advisory, e.weight, e.fail_on_error) for e in entries])


class _Group:
    """Turns alike: their decision, the results of the first (which all count alike), and
    how many there are."""

    __slots__ = ("decision", "results", "turns")

    def __init__(self, decision: Decision, results: Sequence[GradeResult]) -> None:
        self.decision: Final = decision
        self.results: Final = results
        self.turns = 1


class TurnsAlike:
    """The turns a batch grades under one policy with entries alike (one `entries_key`),
    grouped by the likeness of their results."""

    __slots__ = ("_counters", "_decisions", "_groups", "_summary")

    def __init__(
        self, names: Sequence[str], decisions: TurnDecisions, summary: SummaryBuilder
    ) -> None:
        self._decisions: Final = decisions
        self._summary: Final = summary
        self._counters: Final = summary.counters(names)
        self._groups: dict[Likeness, _Group] | None = {}
        """None once `GROUPS` are full."""

    def decide(self, results: Sequence[GradeResult], entries: Sequence[GraderEntry]) -> Decision:
        """The decision on a turn's `results` (by `entries`, in order), which count in the
        summary (grouped ones once `flush`ed)."""
        groups = self._groups
        if groups is not None:
            key = likeness(results)
            group = groups.get(key)
            if group is not None:
                group.turns += 1
                return group.decision
            if len(groups) < GROUPS:
                decision = self._decisions.of(tally(results, entries))
                groups[key] = _Group(decision, results)
                return decision
            self.flush()
            self._groups = None
        self._summary.count_results(results, self._counters)
        return self._decisions.of(tally(results, entries))

    def flush(self) -> None:
        """Count the grouped turns into the summary."""
        groups = self._groups or {}
        for group in groups.values():
            self._summary.count_results(group.results, self._counters, group.turns)
        groups.clear()


class Alikes:
    """Every `TurnsAlike` of one batch, by policy and entries' key."""

    __slots__ = ("_decisions", "_known", "_summary")

    def __init__(self, summary: SummaryBuilder) -> None:
        self._summary: Final = summary
        self._known: dict[tuple[Policy, EntriesKey], TurnsAlike] = {}
        self._decisions: dict[Policy, TurnDecisions] = {}

    def of(self, entries: Sequence[GraderEntry], policy: Policy) -> TurnsAlike:
        """The turns alike of `entries` under `policy`."""
        key = (policy, entries_key(entries))
        found = self._known.get(key)
        if found is None:
            decisions = self._decisions.get(policy)
            if decisions is None:
                decisions = self._decisions[policy] = TurnDecisions(policy)
            names = [entry.name for entry in entries]  # results carry their entry's name
            found = self._known[key] = TurnsAlike(names, decisions, self._summary)
        return found

    def flush(self) -> None:
        """Count every group into the summary."""
        for turns in self._known.values():
            turns.flush()
