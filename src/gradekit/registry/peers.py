"""Keys that other evaluation frameworks use for gradekit's own fields, and the warnings they get.

A case written for another framework (HoloDeck's `evaluations:` and `ground_truth:`,
promptfoo's `assert:`, DeepEval's `expected_output:`) loads in gradekit, its unknown keys kept as
metadata, and so would be graded without its reference or its graders. Such a key stays
metadata (that is the rule for unknown case keys), but the loader says once per suite what it
probably meant; with `strict` it is an error instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, overload

__all__ = [
    "CASE_PEERS",
    "ENTRY_PEERS",
    "PeerWarnings",
    "peer_field",
    "peer_note",
    "strict_note",
]

CASE_PEERS: Final[Mapping[str, str]] = {
    "ground_truth": "expected",
    "expected_output": "expected",
    "answer": "expected",
    "response": "output",
    "evaluations": "graders",
    "metrics": "graders",
    "assert": "graders",
}
"""A case's or turn's key in a peer framework -> the gradekit field it stands for."""

ENTRY_PEERS: Final[Mapping[str, str]] = {"type": "kind"}
"""A grader entry's key in a peer framework -> the gradekit key."""


def peer_field(key: Any, peers: Mapping[str, str] = CASE_PEERS) -> str | None:
    """The gradekit field a peer framework's `key` stands for, if it is one."""
    return peers.get(key) if isinstance(key, str) else None


def peer_note(key: str, field: str) -> str:
    """`'ground_truth' is kept as metadata; did you mean 'expected'?`"""
    return f"'{key}' is kept as metadata; did you mean '{field}'?"


def strict_note(key: str, field: str) -> str:
    """The problem `key` is with `strict`: it would be kept as metadata without it."""
    return (
        f"'{key}' is not a gradekit field; did you mean '{field}'? (strict: rename it, or put "
        "it under 'metadata:' to keep it as metadata)"
    )


class PeerWarnings(Sequence[str]):
    """The warnings of one suite, one per peer key: the first place it was seen.

    YAML cases add theirs at load; dataset lines add theirs as they are read, so the sequence
    may grow while the suite is graded (readers take `warnings[shown:]` for the new ones).
    """

    def __init__(self, lines: Sequence[str] = ()) -> None:
        self._lines = list(lines)
        self._keys: set[str] = set()
        self._keyed: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def add(self, key: str, line: str) -> None:
        """Keep `line`, the first warning about `key` (later ones about it are dropped)."""
        with self._lock:
            if key not in self._keys:
                self._keys.add(key)
                self._lines.append(line)
                self._keyed.append((key, line))

    def keyed(self) -> list[tuple[str, str]]:
        """(key, warning) of each warning `add` kept, in order (a Dask worker sends those of
        the lines it built to the driver, which adds them to the suite's)."""
        with self._lock:
            return list(self._keyed)

    def seen(self, key: str) -> bool:
        """Whether a warning about `key` was kept already."""
        return key in self._keys

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        with self._lock:
            return self._lines[index]

    def __len__(self) -> int:
        return len(self._lines)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._lines))

    def __repr__(self) -> str:
        return f"PeerWarnings({self._lines!r})"
