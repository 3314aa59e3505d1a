"""Cases from plain data: the one shape shared by YAML suites and JSONL dataset lines.

A case is single-turn (turn fields on the case), has `turns: [...]`, or has `messages:` (a
transcript in one of three formats, see `gradekit.suite.transcript`). Every problem is
collected with its path from the suite's root, never only the first; the caller places them
in its file.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

import attrs

from gradekit.core.errors import Problem, close_matches
from gradekit.core.types import EMPTY, Sample, ToolCall
from gradekit.registry.entries import GraderEntry, peer_field, peer_note, strict_note
from gradekit.suite.model import (
    Case,
    EntryMaker,
    KeyPath,
    Turn,
    build_entries,
    describe,
    parse_policy,
    parse_tags,
    parse_tool_calls,
    with_tags,
)
from gradekit.suite.transcript import transcript_turns

__all__ = ["CASE_FIELDS", "CaseBuilder", "case_name"]

TURN_FIELDS: Final = (
    "input",
    "output",
    "expected",
    "tool_calls",
    "context",
    "workspace",
    "graders",
    "metadata",
)
CASE_ONLY: Final = (
    "name",
    "policy",
    "threshold",
    "turns",
    "messages",
    "messages_format",
    "tags",
    "attempts",
)
CASE_FIELDS: Final = CASE_ONLY + TURN_FIELDS
_CASE_SET: Final = frozenset(CASE_FIELDS)
_TURN_SET: Final = frozenset(TURN_FIELDS)
INHERITED: Final = ("expected", "context", "workspace")
PER_TURN: Final = ("input", "output", "tool_calls")
# Any other key of a case or turn is metadata; only a near-miss of a field is taken for a typo.


@functools.lru_cache(maxsize=4096)
def _typo(key: Any, fields: tuple[str, ...]) -> str | None:
    """The field `key` looks like a misspelling of, if any (cached: dataset lines repeat)."""
    if not isinstance(key, str):
        return None
    hits = close_matches(key, fields)
    return hits[0] if hits else None


def case_name(raw: Any, default: str) -> str:
    """The case's name, or `default` when it has none (or a bad one, reported elsewhere)."""
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) and name else default


class _Spec(NamedTuple):
    """What one turn is made of: `fields` (its own over the case's inherited ones), the path of
    the turn (`path`) and of the case (`case_path`), and what the turn itself wrote (`own`).
    A tuple: one is made for every dataset line."""

    fields: Mapping[str, Any]
    path: KeyPath
    case_path: KeyPath
    metadata: Mapping[str, Any] = EMPTY
    entries: tuple[GraderEntry, ...] = ()
    calls: tuple[ToolCall, ...] | None = None
    own: Mapping[str, Any] | None = None
    messages: list[Any] | None = None

    def origin(self, key: str) -> KeyPath:
        """The path of the mapping that wrote `key` for this turn: the turn's, or the case's."""
        return self.path if self.own is None or key in self.own else self.case_path


@attrs.frozen
class CaseBuilder:
    """Builds Cases: `suite_entries` head every turn's graders, `make_entry` creates entries,
    `folder` is where relative `workspace` folders start. With `strict`, a peer framework's
    key (`ground_truth`, see `_peers`) is a problem rather than a warning. `suite_failed`: a
    suite-level entry could not be created (reported already), so no case is called ungraded.
    `suite_tags` head every case's tags."""

    suite_entries: tuple[GraderEntry, ...]
    make_entry: EntryMaker
    folder: Path
    strict: bool = False
    suite_failed: bool = False
    suite_tags: tuple[str, ...] = ()

    def build(
        self,
        raw: Any,
        *,
        name: str,
        base: KeyPath = (),
        location: str | None = None,
        warnings: list[Problem] | None = None,
    ) -> tuple[Case | None, list[Problem]]:
        """The case `raw` found at `base`, or None and every problem in it.

        Peer frameworks' keys kept as metadata are added to `warnings` (when given), each a
        Problem at the key whose message starts with the case's name.
        """
        problems: list[Problem] = []
        peers: list[Problem] = []
        if not isinstance(raw, dict):
            problems.append(
                Problem(base, f"a case must be a mapping of fields, got {describe(raw)}")
            )
            return None, problems
        if "name" in raw and not (isinstance(raw["name"], str) and raw["name"]):
            problems.append(
                Problem(
                    (*base, "name"), f"expected a non-empty string, got {describe(raw['name'])}"
                )
            )
        extra = self._extra(raw, base, CASE_FIELDS, problems, peers)
        if "attempts" in raw:  # a suite file's cases give it (see `attempts`), not lines
            problems.append(
                Problem(
                    (*base, "attempts"),
                    "attempts: not read from a dataset line, which is one attempt: write "
                    "one line per attempt, each with the case's name and its 'attempt' "
                    "index (0, 1, 2 ...)",
                    key=True,
                )
            )
        # Each optional key is read only when written: most dataset lines give none of them.
        policy = None
        if "policy" in raw or "threshold" in raw:
            policy = parse_policy(raw, problems, base)
        tags = self.suite_tags
        if raw.get("tags") is not None:
            tags = with_tags(tags, parse_tags(raw["tags"], (*base, "tags"), problems))
        case_entries: tuple[GraderEntry, ...] = ()
        if raw.get("graders") is not None:
            case_entries = build_entries(
                raw["graders"], (*base, "graders"), self.make_entry, problems
            )
        _shape_problems(raw, base, problems)
        history: tuple[Sample, ...] = ()
        turns: list[Turn] = []
        graded = False
        for index, spec in enumerate(self._specs(raw, base, problems, peers)):
            fields = spec.fields
            calls = spec.calls
            if calls is None:
                calls = ()
                if fields.get("tool_calls") is not None:
                    where = (*spec.path, "tool_calls")
                    calls = parse_tool_calls(fields["tool_calls"], where, problems)
            context = fields.get("context")
            if context is not None:
                context = self._context(context, spec.origin("context"), problems)
            workspace = fields.get("workspace")
            if workspace is not None:
                workspace = self._workspace(workspace, spec.origin("workspace"), problems)
            # The turn's metadata over the case's; most turns have none: no mapping of their own.
            metadata = {**extra, **spec.metadata} if spec.metadata else extra or EMPTY
            sample = Sample(
                name,
                index,
                fields.get("input"),
                fields.get("output"),
                fields.get("expected"),
                calls,
                context,
                history,
                workspace,
                metadata,
            )
            history = (*history, sample)
            graders = self.suite_entries + case_entries + spec.entries
            graded = graded or bool(graders)
            turns.append(Turn(sample, graders, spec.messages))
        if not (problems or self.suite_failed or graded):
            problems.append(Problem(base, _ungraded(name, peers)))
        if warnings is not None and peers:
            warnings.extend(_named(peer, name, base) for peer in peers)
        if problems:
            return None, problems
        metadata = extra or EMPTY  # most cases have none: no mapping of their own
        case = Case(name, tuple(turns), policy, location, None, metadata, tags)
        return case, problems

    def _extra(
        self,
        raw: Mapping[str, Any],
        path: KeyPath,
        fields: tuple[str, ...],  # CASE_FIELDS or TURN_FIELDS
        problems: list[Problem],
        peers: list[Problem],
    ) -> dict[str, Any]:
        """Metadata of a case or turn: its other keys, then its `metadata:` mapping; a key that
        looks like a misspelt field is an error rather than metadata, and a peer framework's
        name for a field is noted in `peers` (an error when strict)."""
        extra: dict[str, Any] = {}
        known = _TURN_SET if fields is TURN_FIELDS else _CASE_SET
        for key, value in raw.items():
            if key in known:
                continue
            typo = _typo(key, fields)
            if typo is None and fields is TURN_FIELDS and key in CASE_ONLY[1:]:
                problems.append(
                    Problem(
                        (*path, key),
                        f"'{key}' belongs to the case, not to a turn; move it to the case",
                        key=True,
                    )
                )
            elif typo is not None:
                problems.append(
                    Problem(
                        (*path, key),
                        f"unknown key '{key}' (did you mean '{typo}'?); to keep it as metadata, "
                        "put it under 'metadata:'",
                        key=True,
                    )
                )
            elif (field := peer_field(key)) is not None:
                if self.strict:
                    problems.append(Problem((*path, key), strict_note(key, field), key=True))
                else:
                    peers.append(Problem((*path, key), peer_note(key, field), key=True))
                    extra[key] = value
            else:
                extra[key] = value
        metadata = raw.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            problems.append(
                Problem((*path, "metadata"), f"expected a mapping, got {describe(metadata)}")
            )
        elif metadata:
            extra.update(metadata)
        return extra

    def _specs(
        self, raw: Mapping[str, Any], base: KeyPath, problems: list[Problem], peers: list[Problem]
    ) -> list[_Spec]:
        """What each turn is made of: its own fields over those the case gives every turn."""
        if "turns" not in raw and "messages" not in raw:  # one turn: the case's own fields
            return [_Spec(raw, base, base)]
        inherited = {key: raw[key] for key in INHERITED if key in raw}
        if "messages" in raw:
            derived, found = transcript_turns(
                raw["messages"],
                (*base, "messages"),
                raw.get("messages_format"),
                (*base, "messages_format"),
            )
            problems.extend(found)
            return [
                _Spec(
                    {**inherited, "input": turn.input, "output": turn.output},
                    turn.path,
                    base,
                    metadata=turn.metadata(),
                    calls=turn.tool_calls(index),
                    own={},
                    messages=turn.messages,
                )
                for index, turn in enumerate(derived)
            ]
        turns = raw["turns"]
        if not isinstance(turns, list) or not turns:
            problems.append(
                Problem(
                    (*base, "turns"), f"expected a non-empty list of turns, got {describe(turns)}"
                )
            )
            return []
        specs = []
        for index, turn in enumerate(turns):
            path = (*base, "turns", index)
            if not isinstance(turn, dict):
                problems.append(
                    Problem(path, f"a turn must be a mapping of fields, got {describe(turn)}")
                )
                continue
            metadata = self._extra(turn, path, TURN_FIELDS, problems, peers)
            entries = build_entries(
                turn.get("graders"), (*path, "graders"), self.make_entry, problems
            )
            specs.append(_Spec({**inherited, **turn}, path, base, metadata, entries, own=turn))
        return specs

    def _context(self, value: Any, path: KeyPath, problems: list[Problem]) -> Any:
        if value is None or isinstance(value, list):
            return value
        if isinstance(value, str):
            return (value,)
        problems.append(
            Problem((*path, "context"), f"expected a list of texts, got {describe(value)}")
        )
        return None

    def _workspace(self, value: Any, path: KeyPath, problems: list[Problem]) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            problems.append(
                Problem((*path, "workspace"), f"expected a folder path, got {describe(value)}")
            )
            return None
        folder = os.path.abspath(self.folder / value)
        if not os.path.isdir(folder):
            problems.append(
                Problem(
                    (*path, "workspace"),
                    f"workspace folder '{value}' does not exist (looked for {folder}); "
                    "workspace paths are relative to the suite file",
                )
            )
            return None
        return folder


def _shape_problems(raw: Mapping[str, Any], base: KeyPath, problems: list[Problem]) -> None:
    """Add the problems of how a case gives its turns: `turns` and `messages` both,
    `messages_format` without `messages`, a per-turn field beside either."""
    if "turns" not in raw and "messages" not in raw and "messages_format" not in raw:
        return  # one turn, the case's own fields: the usual dataset line
    if "turns" in raw and "messages" in raw:
        problems.append(
            Problem((*base, "messages"), "a case gives 'turns' or 'messages', not both; remove one")
        )
    if "messages_format" in raw and "messages" not in raw:
        problems.append(
            Problem(
                (*base, "messages_format"),
                "messages_format says how 'messages' is written, and this case has none; "
                "add messages or remove messages_format",
                key=True,
            )
        )
    shaped = [key for key in ("turns", "messages") if key in raw]
    for key in PER_TURN if shaped else ():
        if key in raw:
            problems.append(
                Problem(
                    (*base, key),
                    f"a case with '{shaped[0]}' gives '{key}' per turn; move it into the turns",
                    key=True,
                )
            )


def _ungraded(name: str, peers: list[Problem]) -> str:
    """The problem of a case that no enabled grader applies to: it would pass ungraded."""
    message = (
        f"case '{name}' has no grader: no enabled grader applies to any of its turns, so it "
        "would pass without being graded; add `graders:` to the suite, the case or a turn"
    )
    named = [peer.path[-1] for peer in peers if peer_field(peer.path[-1]) == "graders"]
    if named:
        message += f" ({peer_note(str(named[0]), 'graders')})"
    return message


def _named(peer: Problem, name: str, base: KeyPath) -> Problem:
    """`case 'x': ...` or `case 'x', turn 1: ...` before a peer key's note."""
    inside = peer.path[len(base) :]
    turn = f", turn {inside[1]}" if len(inside) > 2 and inside[0] == "turns" else ""
    return attrs.evolve(peer, message=f"case '{name}'{turn}: {peer.message}")
