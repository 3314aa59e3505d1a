"""Cases from plain data: the one shape shared by YAML suites and JSONL dataset lines.

A case is single-turn (turn fields on the case), has `turns: [...]`, or has `messages:` (an
OpenAI transcript, see `_transcript`). Every problem is collected with its path from the
suite's root, never only the first; the caller places them in its file.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit._errors import ConfigError, Problem
from gradekit._model import Case, GraderEntry, Policy, Turn
from gradekit._options import close_matches
from gradekit._transcript import transcript_turns
from gradekit._types import Sample, ToolCall, error_text

__all__ = ["CaseBuilder", "EntryMaker", "build_entries", "case_name", "describe", "parse_policy"]

KeyPath = tuple[Any, ...]
EntryMaker = Callable[[Any, KeyPath], "GraderEntry | None"]
"""`make_entry(raw, path)`: create one grader entry found at `path`; raises ConfigError."""

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
CASE_ONLY: Final = ("name", "policy", "threshold", "turns", "messages")
CASE_FIELDS: Final = CASE_ONLY + TURN_FIELDS
INHERITED: Final = ("expected", "context", "workspace")
PER_TURN: Final = ("input", "output", "tool_calls")
TOOL_CALL_FIELDS: Final = ("name", "arguments", "result", "error", "turn")
MODES: Final = ("all", "any", "weighted")
# Stricter than close_matches' default: other keys are metadata, only near-misses are typos.
TYPO_CUTOFF: Final = 0.75


def describe(value: Any) -> str:
    """A value as error messages quote it: text in quotes, anything else with its type."""
    return repr(value) if isinstance(value, str) else f"{value!r} ({type(value).__name__})"


@functools.lru_cache(maxsize=4096)
def _typo(key: Any, fields: tuple[str, ...]) -> str | None:
    """The field `key` looks like a misspelling of, if any (cached: dataset lines repeat)."""
    if not isinstance(key, str):
        return None
    import difflib

    hits = difflib.get_close_matches(key, fields, n=1, cutoff=TYPO_CUTOFF)
    return hits[0] if hits else None


def case_name(raw: Any, default: str) -> str:
    """The case's name, or `default` when it has none (or a bad one, reported elsewhere)."""
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) and name else default


def parse_policy(raw: Mapping[str, Any], problems: list[Problem], base: KeyPath) -> Policy | None:
    """`policy` (+ `threshold`) of a mapping: `policy: weighted` with `threshold: 0.8` beside it,
    or `policy: {mode: weighted, threshold: 0.8}`; None when the mapping sets no policy."""
    value: Any = raw.get("policy")
    threshold: Any = raw.get("threshold")
    where: KeyPath = (*base, "policy")
    threshold_where = (*base, "threshold")
    if isinstance(value, dict):
        for key in value:
            if key not in ("mode", "threshold"):
                hint = close_matches(str(key), ("mode", "threshold"))
                suffix = f" (did you mean '{hint[0]}'?)" if hint else ""
                message = f"unknown policy key '{key}'{suffix}; a policy has 'mode' and 'threshold'"
                problems.append(Problem((*where, key), message, key=True))
        if "threshold" in raw:
            problems.append(
                Problem(
                    threshold_where, "the policy mapping already gives the threshold; remove one"
                )
            )
        if any(key not in ("mode", "threshold") for key in value):
            return None
        value, threshold = value.get("mode"), value.get("threshold")
        where, threshold_where = (*where, "mode"), (*where, "threshold")
    if value is None:
        if threshold is not None:
            problems.append(
                Problem(threshold_where, "a threshold needs `policy: weighted` beside it; add it")
            )
        return None
    mode: Any = value
    if mode not in MODES:
        hint = close_matches(mode, MODES) if isinstance(mode, str) else []
        suffix = f" (did you mean '{hint[0]}'?)" if hint else ""
        problems.append(
            Problem(where, f"expected all, any or weighted, got {describe(mode)}{suffix}")
        )
        return None
    if threshold is None:
        if mode == "weighted":
            problems.append(
                Problem(where, "policy 'weighted' needs a threshold; add `threshold: 0.8` (0 to 1)")
            )
        return Policy(mode)
    if mode != "weighted":
        problems.append(
            Problem(
                threshold_where,
                f"a threshold applies to policy 'weighted', not '{mode}'; "
                "remove it or use policy: weighted",
            )
        )
        return Policy(mode)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        problems.append(
            Problem(threshold_where, f"expected a number from 0 to 1, got {describe(threshold)}")
        )
        return None
    if not 0.0 <= threshold <= 1.0:
        problems.append(Problem(threshold_where, f"must be between 0 and 1, got {threshold!r}"))
        return None
    return Policy(mode, float(threshold))


def build_entries(
    value: Any, path: KeyPath, make_entry: EntryMaker, problems: list[Problem]
) -> tuple[GraderEntry, ...]:
    """The grader entries listed at `path`; `enabled: false` entries are left out."""
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(Problem(path, f"expected a list of grader entries, got {describe(value)}"))
        return ()
    entries: list[GraderEntry] = []
    for index, raw in enumerate(value):
        where = (*path, index)
        try:
            entry = make_entry(raw, where)
        except ConfigError as error:
            inner = error.problems or (Problem((), error.message),)
            problems.extend(Problem((*where, *p.path), p.message, p.key) for p in inner)
        except Exception as error:  # a third-party factory may raise anything
            problems.append(Problem(where, f"cannot create this grader: {error_text(error)}"))
        else:
            if entry is not None:
                entries.append(entry)
    return tuple(entries)


def _tool_calls(value: Any, path: KeyPath, problems: list[Problem]) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(Problem(path, f"expected a list of tool calls, got {describe(value)}"))
        return ()
    calls: list[ToolCall] = []
    for index, raw in enumerate(value):
        where = (*path, index)
        if not isinstance(raw, dict):
            problems.append(
                Problem(where, f"expected a tool call mapping with a 'name', got {describe(raw)}")
            )
            continue
        before = len(problems)
        for key in raw:
            if key not in TOOL_CALL_FIELDS:
                hint = close_matches(str(key), TOOL_CALL_FIELDS)
                suffix = f" (did you mean '{hint[0]}'?)" if hint else ""
                message = f"unknown tool call key '{key}'{suffix}; a tool call has " + ", ".join(
                    TOOL_CALL_FIELDS
                )
                problems.append(Problem((*where, key), message, key=True))
        name, arguments, error, turn = (raw.get(k) for k in ("name", "arguments", "error", "turn"))
        if name is None:
            problems.append(
                Problem(where, "missing 'name': every tool call names its tool", key=True)
            )
        elif not isinstance(name, str):
            problems.append(Problem((*where, "name"), f"expected a string, got {describe(name)}"))
        if arguments is not None and not isinstance(arguments, dict):
            problems.append(
                Problem((*where, "arguments"), f"expected a mapping, got {describe(arguments)}")
            )
        if error is not None and not isinstance(error, str):
            problems.append(Problem((*where, "error"), f"expected a string, got {describe(error)}"))
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            problems.append(
                Problem((*where, "turn"), f"expected a whole number, got {describe(turn)}")
            )
        if len(problems) == before and isinstance(name, str):
            calls.append(ToolCall(name, arguments or {}, raw.get("result"), error, turn))
    return tuple(calls)


@attrs.frozen
class _Spec:
    """What one turn is made of: `fields` (its own over the case's inherited ones), the path of
    the turn (`path`) and of the case (`case_path`), and what the turn itself wrote (`own`)."""

    fields: Mapping[str, Any]
    path: KeyPath
    case_path: KeyPath
    metadata: Mapping[str, Any] = attrs.field(factory=dict)
    entries: tuple[GraderEntry, ...] = ()
    calls: tuple[ToolCall, ...] | None = None
    own: Mapping[str, Any] | None = None

    def origin(self, key: str) -> KeyPath:
        """The path of the mapping that wrote `key` for this turn: the turn's, or the case's."""
        return self.path if self.own is None or key in self.own else self.case_path


@attrs.frozen
class CaseBuilder:
    """Builds Cases: `suite_entries` head every turn's graders, `make_entry` creates entries,
    `folder` is where relative `workspace` folders start."""

    suite_entries: tuple[GraderEntry, ...]
    make_entry: EntryMaker
    folder: Path

    def build(
        self, raw: Any, *, name: str, base: KeyPath = (), location: str | None = None
    ) -> tuple[Case | None, list[Problem]]:
        """The case `raw` found at `base`, or None and every problem in it."""
        problems: list[Problem] = []
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
        extra = self._extra(raw, base, CASE_FIELDS, problems)
        policy = parse_policy(raw, problems, base)
        case_entries = build_entries(
            raw.get("graders"), (*base, "graders"), self.make_entry, problems
        )
        if "turns" in raw and "messages" in raw:
            problems.append(
                Problem(
                    (*base, "messages"), "a case gives 'turns' or 'messages', not both; remove one"
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
        samples: list[Sample] = []
        turns: list[Turn] = []
        for index, spec in enumerate(self._specs(raw, base, problems)):
            fields = spec.fields
            calls = spec.calls
            if calls is None:
                calls = _tool_calls(fields.get("tool_calls"), (*spec.path, "tool_calls"), problems)
            sample = Sample(
                case=name,
                turn=index,
                input=fields.get("input"),
                output=fields.get("output"),
                expected=fields.get("expected"),
                tool_calls=calls,
                context=self._context(fields.get("context"), spec.origin("context"), problems),
                history=tuple(samples),
                workspace=self._workspace(
                    fields.get("workspace"), spec.origin("workspace"), problems
                ),
                metadata={**extra, **spec.metadata},
            )
            samples.append(sample)
            turns.append(Turn(sample, self.suite_entries + case_entries + spec.entries))
        if problems:
            return None, problems
        return Case(name, tuple(turns), policy=policy, location=location), problems

    def _extra(
        self,
        raw: Mapping[str, Any],
        path: KeyPath,
        fields: tuple[str, ...],
        problems: list[Problem],
    ) -> dict[str, Any]:
        """Metadata of a case or turn: its other keys, then its `metadata:` mapping; a key that
        looks like a misspelt field is an error rather than metadata."""
        extra: dict[str, Any] = {}
        for key, value in raw.items():
            if key in fields:
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

    def _specs(self, raw: Mapping[str, Any], base: KeyPath, problems: list[Problem]) -> list[_Spec]:
        """What each turn is made of: its own fields over those the case gives every turn."""
        inherited = {key: raw[key] for key in INHERITED if key in raw}
        if "messages" in raw:
            derived, found = transcript_turns(raw["messages"], (*base, "messages"))
            problems.extend(found)
            return [
                _Spec(
                    {**inherited, "input": turn.input, "output": turn.output},
                    turn.path,
                    base,
                    metadata={} if turn.system is None else {"system": turn.system},
                    calls=turn.tool_calls(index),
                    own={},
                )
                for index, turn in enumerate(derived)
            ]
        if "turns" not in raw:
            return [_Spec(raw, base, base)]
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
            metadata = self._extra(turn, path, TURN_FIELDS, problems)
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
