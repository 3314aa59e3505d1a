"""Grader entries: the common keys every grader entry takes, split from the kind's options,
and the keys other frameworks use for gradekit's own fields.

Used by the suite loader and by the composite kinds (whose children are entries too), so an
entry means the same thing at every level and at every depth.

**Other frameworks' keys** (`ENTRY_PEERS`, `CASE_PEERS`, `PeerWarnings`). A case written for
another framework (HoloDeck's `evaluations:` and `ground_truth:`, promptfoo's `assert:`, DeepEval's
`expected_output:`) loads in gradekit, its unknown keys kept as metadata, and so would be graded
without its reference or its graders. Such a key stays metadata (that is the rule for unknown case
keys), but the loader says once per suite what it probably meant; with `strict` it is an error
instead."""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Literal, overload

import attrs

from gradekit.core.errors import ConfigError, GradekitError, Problem, did_you_mean
from gradekit.core.types import EMPTY, FrozenDict, Grader, freeze
from gradekit.core.values import fraction_problem, number_of, seconds_problem, yaml_seconds
from gradekit.registry.registry import Registry, default_registry

__all__ = [
    "CASE_PEERS",
    "COMMON_KEYS",
    "ENTRY_PEERS",
    "KIND_TIMEOUT_GRACE",
    "MAX_COMPOSITE_DEPTH",
    "GraderEntry",
    "Isolation",
    "PeerWarnings",
    "build_entry",
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


Isolation = Literal["thread", "process"]

MAX_COMPOSITE_DEPTH: Final = 16
"""How deep composite graders may nest (`all` inside `any` inside ...): deeper is an error."""

# How many entries are being built around this one (a composite builds its children inside).
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("gradekit_entry_depth", default=0)


def _timeout(_: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None:
        from gradekit.core.values import seconds

        seconds(value)


@attrs.frozen
class GraderEntry:
    """A grader as configured in a suite: the grader plus the common keys of its entry.

    `timeout`, `isolation` and `sandbox` are None when the entry does not set them (the run's
    default applies). `config` keeps the kind's own options as written, so the grader can be
    created again in a child process. `location` is `file:line:column` of the entry, when known.
    An entry written `enabled: false` is never built (`build_entry` returns None).
    """

    grader: Grader
    kind: str
    name: str
    weight: float = 1.0
    advisory: bool = False
    threshold: float | None = None
    timeout: float | None = attrs.field(default=None, validator=_timeout)
    isolation: Isolation | None = None
    fail_on_error: bool = False
    config: FrozenDict[str, Any] = attrs.field(default=EMPTY, converter=freeze)
    location: str | None = None
    sandbox: str | None = None


KIND_TIMEOUT_GRACE: Final = 5.0
"""Seconds the runner's watchdog waits beyond a kind's own `timeout` (see build_entry)."""

COMMON_KEYS: Final = frozenset(
    {
        "kind",
        "name",
        "weight",
        "advisory",
        "threshold",
        "timeout",
        "isolation",
        "enabled",
        "fail_on_error",
        "sandbox",
    }
)


def _number(raw: Mapping[str, Any], key: str, problems: list[Problem]) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    try:
        number = number_of(value)
    except OverflowError:  # a whole number past the floats, or text such as '1e999'
        shown = repr(value) if isinstance(value, str) else "a whole number"
        problems.append(
            Problem(
                (key,),
                f"expected a number, got {shown}, too large for a float (it would be infinity)",
            )
        )
        return None
    if number is None:
        problems.append(Problem((key,), f"expected a number, got {value!r}"))
    return number


def _timeout_of(raw: Mapping[str, Any], problems: list[Problem]) -> float | None:
    value = raw.get("timeout")
    if value is None:
        return None
    value = yaml_seconds(value)
    problem = seconds_problem(value)
    if problem is not None:
        problems.append(Problem(("timeout",), problem))
        return None
    return float(value)


def _fraction(raw: Mapping[str, Any], key: str, problems: list[Problem]) -> float | None:
    value = _number(raw, key, problems)
    problem = None if value is None else fraction_problem(value)
    if problem is not None:
        problems.append(Problem((key,), problem))
    return value


def _flag(raw: Mapping[str, Any], key: str, default: bool, problems: list[Problem]) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        problems.append(Problem((key,), f"expected true or false, got {value!r}"))
        return default
    return value


def _sandbox(raw: Mapping[str, Any], problems: list[Problem]) -> str | None:
    value = raw.get("sandbox")
    if value is None:  # the usual entry: the process modules stay unloaded
        return None
    from gradekit.process.bubblewrap import check_mode

    wrong = check_mode(value)
    if wrong is not None:
        problems.append(Problem(("sandbox",), wrong))
        return None
    return str(value)


def _route_sandbox(
    options_class: type | None,
    options: dict[str, Any],
    sandbox: str | None,
    problems: list[Problem],
) -> None:
    """A kind with its own `sandbox` (program, build, lint) gets the entry's for its commands
    (and checks it); for any other, `sandbox: bwrap` must be possible here."""
    if sandbox is not None and options_class is not None and _declares(options_class, "sandbox"):
        options["sandbox"] = sandbox
        return
    if sandbox != "bwrap":  # only an explicit bwrap can be impossible here
        return
    from gradekit.process.bubblewrap import requested_problem

    problem = requested_problem(sandbox)
    if problem is not None:
        problems.append(Problem(("sandbox",), problem))


def build_entry(
    raw: Mapping[str, Any], *, registry: Registry | None = None, location: str | None = None
) -> GraderEntry | None:
    """Validate one grader entry and create its grader; None when `enabled: false`.

    Raises ConfigError whose problems have paths relative to `raw` (`$.threshold`,
    `$.absolute_tolerance`, `$.graders[0].kind` for a composite's child), all at once.
    Composites nested more than `MAX_COMPOSITE_DEPTH` deep are an error.
    """
    depth = _DEPTH.get()
    if depth > MAX_COMPOSITE_DEPTH:
        message = f"composite graders are nested more than {MAX_COMPOSITE_DEPTH} deep; flatten them"
        raise ConfigError("invalid grader entry", [Problem((), message)])
    token = _DEPTH.set(depth + 1)
    try:
        return _build_entry(raw, registry=registry, location=location)
    finally:
        _DEPTH.reset(token)


def _build_entry(
    raw: Mapping[str, Any], *, registry: Registry | None, location: str | None
) -> GraderEntry | None:
    registry = default_registry if registry is None else registry
    if not isinstance(raw, Mapping):
        raise ConfigError(
            "invalid grader entry",
            [Problem((), f"a grader entry must be a mapping with a 'kind', got {raw!r}")],
        )
    problems: list[Problem] = []
    kind = raw.get("kind")
    if kind is None:
        problems.append(Problem((), _missing_kind(raw), key=True))
    elif not isinstance(kind, str):
        problems.append(Problem(("kind",), f"expected a kind name, got {kind!r}"))
        kind = None
    name = raw.get("name", kind)
    if name is not None and not isinstance(name, str):
        problems.append(Problem(("name",), f"expected a string, got {name!r}"))
        name = kind
    weight = _number(raw, "weight", problems)
    if weight is not None and not 0 <= weight < math.inf:  # NaN and infinity too
        problems.append(Problem(("weight",), f"must be a finite number >= 0, got {weight!r}"))
    threshold = _fraction(raw, "threshold", problems)
    timeout = _timeout_of(raw, problems)
    isolation = raw.get("isolation")
    if isolation not in (None, "thread", "process"):
        problems.append(
            Problem(("isolation",), f"expected 'thread' or 'process', got {isolation!r}")
        )
        isolation = None
    sandbox = _sandbox(raw, problems)
    advisory = _flag(raw, "advisory", False, problems)
    enabled = _flag(raw, "enabled", True, problems)
    fail_on_error = _flag(raw, "fail_on_error", False, problems)
    options = {key: value for key, value in raw.items() if key not in COMMON_KEYS}
    if kind is None:
        raise ConfigError("invalid grader entry", problems)
    if not enabled and not problems:
        return None
    grader = None
    own_timeout = False
    try:
        options_class = registry.options_class(kind)
        threshold, own_timeout = _route_to_kind(
            options_class, options, threshold, timeout, advisory
        )
        _route_sandbox(options_class, options, sandbox, problems)
        grader = registry.create(kind, name or kind, options)
    except ConfigError as error:
        problems.extend(_peer_hint(p, kind) for p in error.problems_under())
    except GradekitError as error:
        problems.append(Problem(("kind",), str(error)))
    if problems or grader is None:
        raise ConfigError("invalid grader entry", problems)
    timeout = _watchdog(grader, timeout) if own_timeout else timeout
    return GraderEntry(
        grader=grader,
        kind=kind,
        # The grader's own name: a kind may choose a better default than the kind (`code`
        # names a nameless entry after its callable), and results and entries must agree.
        name=getattr(grader, "name", None) or name or kind,
        weight=1.0 if weight is None else weight,
        advisory=advisory,
        threshold=threshold,
        timeout=timeout,
        isolation=isolation,
        fail_on_error=fail_on_error,
        config=options,
        location=location,
        sandbox=sandbox,
    )


def _missing_kind(raw: Mapping[str, Any]) -> str:
    message = "missing 'kind': every grader entry names its kind"
    named = [key for key, field in ENTRY_PEERS.items() if field == "kind" and key in raw]
    if named:
        message += f" ('{named[0]}' is another framework's name for it: did you mean 'kind'?)"
    return message


def _peer_hint(problem: Problem, kind: str) -> Problem:
    """The kind's own `unknown option 'type'` says what a peer framework's key stands for,
    and `unknown option 'advisroy'` which common key of every entry it looks like."""
    key = problem.path[0] if problem.key and len(problem.path) == 1 else None
    if not isinstance(key, str) or "unknown option" not in problem.message:
        return problem
    field = ENTRY_PEERS.get(key)
    if field is None:
        hint = None if "did you mean" in problem.message else did_you_mean(key, COMMON_KEYS)
        if hint is None:
            return problem
        return attrs.evolve(problem, message=f"unknown option '{key}' for kind '{kind}' ({hint})")
    message = (
        f"unknown option '{key}' for kind '{kind}': gradekit names a grader's {field} with "
        f"'{field}' (did you mean '{field}'?); remove '{key}'"
    )
    return attrs.evolve(problem, message=message)


def _route_to_kind(
    options_class: type | None,
    options: dict[str, Any],
    threshold: float | None,
    timeout: float | None,
    advisory: bool,
) -> tuple[float | None, bool]:
    """Give the kind the common keys it declares as its own options.

    Returns the threshold left for the runner and whether the kind has its own timeout.
    """
    if options_class is None:
        return threshold, False
    # A kind that declares `advisory` learns that its entry is advisory: the similarity
    # kinds then need no threshold (a score is reported, no verdict is asked of it).
    if advisory and _declares(options_class, "advisory"):
        options["advisory"] = True
    # A kind that declares its own `threshold` option applies it itself (the `code` kind
    # uses it to derive `passed` from a bare score); otherwise the runner applies it.
    if (
        threshold is not None
        and fraction_problem(threshold) is None  # else reported above, not again by the kind
        and _declares(options_class, "threshold")
    ):
        options["threshold"] = threshold
        threshold = None
    # Likewise a kind with its own `timeout` (program, build, lint kill their command and
    # report a fail) gets the entry's timeout; the runner's watchdog stays behind it.
    own_timeout = _declares(options_class, "timeout")
    if own_timeout and timeout is not None:
        options["timeout"] = timeout
    return threshold, own_timeout


def _watchdog(grader: Any, timeout: float | None) -> float | None:
    """The runner's timeout for a kind with its own: a grace period behind the kind's."""
    value = getattr(grader, "timeout", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) + KIND_TIMEOUT_GRACE
    return timeout


def _declares(cls: type, field: str) -> bool:
    return field in attrs.fields_dict(cls)
