"""The suite as loaded: its cases, their turns and the policy that combines results, and the
parsers of the small values a suite file is made of.

The suite loader builds `Suite` / `Case` / `Turn` (each turn holding its `GraderEntry`s, from
`gradekit.registry.entries`); the runner grades them. The model is plain, frozen data; what
grades it lives in the runner.

**Parsers** of the small values: policies, grader entry lists, tool
calls, and `tags:` (`parse_tags`, `with_tags`).

Tags, of a case and of the suite, are a list of strings, the suite's added to every case's:
what `--select tag:NAME` reads (see `gradekit.suite.selection`) and what the reports show
beside each case; they are not metadata, and graders do not see them.

Each appends every problem it finds (with its path from the suite's root) and returns what it
could build, so one pass over a file reports everything at once."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from gradekit.core.errors import ConfigError, Problem, hint_suffix
from gradekit.core.types import EMPTY, FrozenDict, Sample, ToolCall, error_text, freeze
from gradekit.core.values import fraction_problem, written
from gradekit.registry.entries import GraderEntry

__all__ = [
    "Case",
    "EntryMaker",
    "KeyPath",
    "Policy",
    "PolicyMode",
    "Suite",
    "Turn",
    "build_entries",
    "describe",
    "entries_of",
    "json_error",
    "parse_policy",
    "parse_tags",
    "parse_tool_calls",
    "with_tags",
]


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


KeyPath = tuple[Any, ...]
EntryMaker = Callable[[Any, KeyPath], "GraderEntry | None"]
"""`make_entry(raw, path)`: create one grader entry found at `path`; raises ConfigError."""

TOOL_CALL_FIELDS: Final = ("name", "arguments", "result", "error", "turn")
MODES: Final = ("all", "any", "weighted")


def json_error(error: json.JSONDecodeError) -> str:
    """`Expecting ',' delimiter (column 12)` / `Unterminated string starting at column 3`."""
    if error.msg.endswith(" at"):  # the json module's messages that expect a position
        return f"{error.msg} column {error.colno}"
    return f"{error.msg} (column {error.colno})"


MAX_DESCRIBED: Final = 200
"""Characters of a value an error message quotes (a 5 MB line is not repeated whole)."""


def describe(value: Any) -> str:
    """A value as error messages quote it: text in quotes, anything else with its type; cut
    to `MAX_DESCRIBED` characters."""
    text = repr(value[: MAX_DESCRIBED + 1] if isinstance(value, str) else value)
    if len(text) > MAX_DESCRIBED:
        text = text[: MAX_DESCRIBED - 1] + "…"
    return text if isinstance(value, str) else f"{text} ({type(value).__name__})"


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
                suffix = hint_suffix(str(key), ("mode", "threshold"))
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
        suffix = hint_suffix(mode, MODES) if isinstance(mode, str) else ""
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
    problem = fraction_problem(threshold)
    if problem is not None:
        problems.append(Problem(threshold_where, problem))
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
            problems.extend(error.problems_under(*where))
        except Exception as error:  # a third-party factory may raise anything
            problems.append(Problem(where, f"cannot create this grader: {error_text(error)}"))
        else:
            if entry is not None:
                entries.append(entry)
    return tuple(entries)


def parse_tool_calls(value: Any, path: KeyPath, problems: list[Problem]) -> tuple[ToolCall, ...]:
    """The tool calls listed at `path` (`{name, arguments, result, error, turn}` each)."""
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
                suffix = hint_suffix(str(key), TOOL_CALL_FIELDS)
                message = f"unknown tool call key '{key}'{suffix}; a tool call has " + ", ".join(
                    TOOL_CALL_FIELDS
                )
                problems.append(Problem((*where, key), message, key=True))
        name, arguments, error, turn = (
            raw.get("name"),
            raw.get("arguments"),
            raw.get("error"),
            raw.get("turn"),
        )
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


def parse_tags(value: Any, path: KeyPath, problems: list[Problem]) -> tuple[str, ...]:
    """The tags `value` (found at `path`) gives, in order without repeats; a value that is
    not a list of non-empty strings is a problem (and gives no tags)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(
            Problem(
                path,
                f"expected a list of tags (strings), got {describe(value)}; "
                "write tags: [smoke, slow]",
            )
        )
        return ()
    for index, tag in enumerate(value):
        if not (isinstance(tag, str) and tag.strip()):
            problems.append(
                Problem((*path, index), f"a tag is a non-empty string, got {describe(tag)}")
            )
            return ()
    return tuple(dict.fromkeys(value))


def with_tags(first: tuple[str, ...], then: tuple[str, ...]) -> tuple[str, ...]:
    """`first` then the tags of `then` not in it (the suite's tags, then the case's own)."""
    if not first:
        return then
    if not then:
        return first
    return tuple(dict.fromkeys((*first, *then)))
