"""`load_suite`: a YAML suite file to a validated `Suite`, every grader created up front.

Every problem in the file is collected and raised at once as one ConfigError whose problems
print as `suite.yaml:14:9: cases[2].graders[0]: unknown option ...`: position of the offending
YAML node, then the path to it.
Dataset lines are checked as they stream: a bad line becomes an errored case, not a load error.

Also owns the suite file's own keys (`TOP_LEVEL_KEYS`, and the plain ones read at the top:
`name`, `description`, `timeout`, `sandbox`, each problem added to the loader's list), and
`check_cases`: a loaded suite's cases read without grading them, what `gradekit validate`
reports.

Many attempts at one case (`build_with_attempts`): a case of a suite file may give
`attempts:`, a list of what the agent produced in each of several tries at the same task;
each attempt becomes a Case of its own (the same name, its `attempt` index from 0), graded like
any case, so the report can give pass@k per case. An attempt is the output of a single-turn
case (any value that is not a mapping), or a mapping with `output` / `tool_calls`
(single-turn), `turns`, or `messages` (a transcript), and an optional `metadata`. The case's
other fields (input, expected, graders, policy, tags...) are shared by every attempt. In a
dataset, each line is one attempt, numbered in file order (`gradekit.suite.dataset`).

Imports the core, `gradekit.registry`, and every reader of this package (cases, dataset,
traces, the located YAML).
"""

from __future__ import annotations

import contextlib
import gc
import os
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit.core.context import place as at_place
from gradekit.core.context import suite_dir
from gradekit.core.errors import ConfigError, OptionWarning, Problem, did_you_mean
from gradekit.core.values import seconds_problem, yaml_seconds
from gradekit.registry.entries import GraderEntry, PeerWarnings, build_entry, peer_field
from gradekit.registry.registry import Registry
from gradekit.suite.cases import CaseBuilder, case_name
from gradekit.suite.dataset import Dataset, EntryCache, FileCases, survey
from gradekit.suite.located_yaml import Located, load_located
from gradekit.suite.model import (
    Case,
    KeyPath,
    Policy,
    Suite,
    build_entries,
    describe,
    entries_of,
    parse_policy,
    parse_tags,
)
from gradekit.suite.trace_cases import OWN_TURNS, TraceCases, parse_traces

__all__ = [
    "ATTEMPT_FIELDS",
    "DEFAULT_TIMEOUT",
    "TOP_LEVEL_KEYS",
    "CaseCheck",
    "build_with_attempts",
    "check_cases",
    "check_keys",
    "load_suite",
    "sandbox_key",
    "text_key",
    "timeout_key",
]


TOP_LEVEL_KEYS: Final = (
    "name",
    "description",
    "policy",
    "threshold",
    "timeout",
    "graders",
    "cases",
    "dataset",
    "traces",
    "sandbox",
    "tags",
)
DEFAULT_TIMEOUT: Final = 60.0
"""The suite's grader timeout in seconds when it sets none."""


def check_keys(data: Mapping[str, Any], problems: list[Problem]) -> None:
    """Unknown top-level keys are errors (with a did-you-mean)."""
    for key in data:
        if key in TOP_LEVEL_KEYS:
            continue
        hint = did_you_mean(str(key), TOP_LEVEL_KEYS)
        peer = peer_field(key)
        suffix = f" ({hint})" if hint else f" (did you mean '{peer}'?)" if peer else ""
        message = f"unknown top-level key '{key}'{suffix}; a suite has " + ", ".join(TOP_LEVEL_KEYS)
        problems.append(Problem((key,), message, key=True))


def text_key(
    data: Mapping[str, Any], key: str, default: str | None, problems: list[Problem]
) -> str | None:
    """A string-valued top-level key."""
    value = data.get(key, default)
    if value is not None and not isinstance(value, str):
        problems.append(Problem((key,), f"expected a string, got {describe(value)}"))
        return default
    return value


def timeout_key(data: Mapping[str, Any], problems: list[Problem]) -> float:
    """The suite's default grader timeout in seconds."""
    value = yaml_seconds(data.get("timeout", DEFAULT_TIMEOUT))
    problem = seconds_problem(value)
    if problem is not None:
        problems.append(Problem(("timeout",), problem))
        return DEFAULT_TIMEOUT
    return float(value)


def sandbox_key(data: Mapping[str, Any], problems: list[Problem]) -> str | None:
    """The suite's `sandbox:` for agent code (auto, bwrap, none), None when unset."""
    value: str | None = data.get("sandbox")
    if value is None:
        return None  # nothing asked: the process modules stay unimported
    from gradekit.process.bubblewrap import check_mode, requested_problem

    problem = check_mode(value) or requested_problem(value)
    if problem is not None:
        problems.append(Problem(("sandbox",), problem))
        return None
    return value


MAX_REPEATED: Final = 20
"""At most this many dataset lines repeating a case's name are listed (the rest counted)."""


def load_suite(
    path: str | os.PathLike[str], *, registry: Registry | None = None, strict: bool = False
) -> Suite:
    """Load, validate and build the suite file at `path`, creating every grader it names.

    Raises ConfigError (source = the path) listing every problem of the file at once, each
    with its `file:line:column`. `registry` defaults to gradekit's default registry. What is
    accepted with a warning (another framework's key kept as metadata) is in
    `suite.warnings`; with `strict` it is a problem instead (a dataset line: an errored case).
    """
    source = os.fspath(path)
    try:
        data = Path(source).read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"suite file {source} does not exist; check the path", source=source
        ) from None
    except OSError as error:
        raise ConfigError(
            f"cannot read suite file {source}: {os.strerror(error.errno or 0)}; check the path",
            source=source,
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"suite file {source} is not UTF-8 text (byte {error.start}); save it as UTF-8",
            source=source,
        ) from None
    with _collector_paused():
        return _Loader(source, load_located(text, source), registry, strict).load()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a suite loads.

    Loading allocates millions of long-lived objects (YAML nodes, then the data and the cases)
    and makes no garbage cycles worth collecting; each collection would walk every one of
    them, which made loading a large suite file take much longer (bench/RESULTS.md).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Loader:
    """One load of one file: collects problems, places them, builds the Suite."""

    def __init__(
        self, source: str, located: Located, registry: Registry | None, strict: bool
    ) -> None:
        self.source = source
        self.located = located
        self.registry = registry
        self.strict = strict
        self.peers: list[Problem] = []
        self.folder = Path(os.path.abspath(source)).parent
        self.problems: list[Problem] = []
        self.names: list[str] = []
        self.templates: dict[str, Any] = {}
        """Under `traces:`, the listed cases waiting for their trace."""

    def make_entry(self, raw: Any, path: KeyPath) -> GraderEntry | None:
        """Create one grader entry of the YAML file (the suite folder is importable). What
        its kind warns about an option (`OptionWarning`) joins the suite's warnings, at the
        option's place (with `strict`, its problems)."""
        line, column = self.located.where(path)
        case, turn = self.case_and_turn(path)
        with (
            suite_dir(self.folder),
            at_place(case, turn),
            warnings.catch_warnings(record=True) as seen,
        ):
            warnings.simplefilter("always", OptionWarning)
            entry = build_entry(raw, registry=self.registry, location=self.at(line, column))
        for warned in seen:
            option = warned.message
            if not isinstance(option, OptionWarning):
                warnings.warn_explicit(option, warned.category, warned.filename, warned.lineno)
            elif self.strict:
                self.problems.append(Problem((*path, *option.path), option.message))
            else:
                self.peers.append(Problem((*path, *option.path), str(option)))
        return entry

    def case_and_turn(self, path: KeyPath) -> tuple[str | None, int | None]:
        """The case name and turn index a path inside `cases` leads to."""
        if len(path) < 2 or path[0] != "cases" or not isinstance(path[1], int):
            return None, None
        case = self.names[path[1]] if path[1] < len(self.names) else f"case-{path[1]}"
        turn = path[3] if len(path) >= 4 and path[2] == "turns" else None
        return case, turn if isinstance(turn, int) else None

    def at(self, line: int, column: int) -> str:
        """`file:line:column` in this file."""
        return f"{self.source}:{line}:{column}"

    def load(self) -> Suite:
        """The Suite, or ConfigError with every problem of the file."""
        data = self.located.data
        if not isinstance(data, Mapping):
            self.problems.append(
                Problem(
                    (), f"a suite file is a mapping with 'cases' or 'dataset', got {describe(data)}"
                )
            )
            raise self.error()
        check_keys(data, self.problems)
        stem = Path(self.source).stem
        name = text_key(data, "name", stem, self.problems) or stem
        text_key(data, "description", None, self.problems)
        timeout = timeout_key(data, self.problems)
        sandbox = sandbox_key(data, self.problems)
        policy = parse_policy(data, self.problems, ()) or Policy()
        before = len(self.problems)
        suite_entries = build_entries(
            data.get("graders"), ("graders",), self.make_entry, self.problems
        )
        failed = len(self.problems) > before
        traced = data.get("traces") is not None
        if not data.get("cases") and data.get("dataset") is None and not traced:
            self.problems.append(
                Problem(
                    ("cases",) if "cases" in data else (),
                    "the suite has no cases (it would pass without grading anything); add "
                    "'cases' or 'dataset'",
                )
            )
        tags = parse_tags(data.get("tags"), ("tags",), self.problems)
        builder = CaseBuilder(
            suite_entries, self.make_entry, self.folder, self.strict, failed, suite_tags=tags
        )
        cases = self.cases(data.get("cases"), builder, traced)
        dataset = self.dataset(data, builder, cases)
        traces = self.traces(data["traces"], builder, cases) if traced else None
        count, graded = None, False
        if dataset is not None:
            count, graded, repeated = survey(dataset.path, dataset.label, dataset.taken)
            for number, message in repeated[:MAX_REPEATED]:
                where = f"{dataset.label}:{number}:1"
                self.problems.append(Problem((), message, where=where))
            if len(repeated) > MAX_REPEATED:
                more = len(repeated) - MAX_REPEATED
                self.problems.append(
                    Problem(
                        (),
                        f"{more} more line{'s' if more != 1 else ''} of '{dataset.label}' "
                        "repeat a case's name",
                        where=f"{dataset.label}:{repeated[MAX_REPEATED][0]}:1",
                    )
                )
            if count == 0 and not cases:
                self.problems.append(
                    Problem(
                        ("dataset",),
                        f"the suite has no cases: '{dataset.label}' has no line that is not "
                        "blank (it would pass without grading anything); add cases",
                    )
                )
            elif not graded and not suite_entries and not cases:
                self.problems.append(
                    Problem(
                        ("dataset",),
                        "no grader applies to any case: the suite has no `graders:` and no "
                        f"line of '{dataset.label}' gives any; add `graders:` to the suite",
                    )
                )
        for path, (line, column), message in self.located.duplicates:
            self.problems.append(Problem(path, message, key=True, where=self.at(line, column)))
        if self.problems:
            raise self.error()
        warnings = self.warnings(dataset)

        return Suite(
            name=name,
            cases=FileCases(cases, dataset, traces),
            graders=suite_entries,
            policy=policy,
            path=self.source,
            timeout=timeout,
            sandbox=sandbox,
            case_count=None
            if traced or (dataset is not None and count is None)
            else len(cases) + (count or 0),
            warnings=warnings,
            entries=None if graded or self.templates else entries_of(suite_entries, cases),
            dataset=None if dataset is None else str(dataset.path),
        )

    def warnings(self, dataset: Dataset | None) -> PeerWarnings:
        """One warning per peer framework's key, where it is first used; the dataset's lines
        add theirs to the same sequence as they are read."""
        found = PeerWarnings() if dataset is None else dataset.warnings
        counts: dict[str, int] = {}
        for peer in self.peers:
            key = _warning_key(peer)
            counts[key] = counts.get(key, 0) + 1
        for peer in self.peers:
            key = _warning_key(peer)
            if found.seen(key):
                continue
            more = counts[key] - 1
            also = f" (also in {more} more place{'s' if more != 1 else ''})" if more else ""
            found.add(
                key, f"{self.at(*self.located.where(peer.path, key=True))}: {peer.message}{also}"
            )
        return found

    def cases(self, raw: Any, builder: CaseBuilder, traced: bool = False) -> tuple[Case, ...]:
        """The YAML cases, every grader created; names must be unique. With `traced`
        (`traces:`), a case writing no turns of its own is checked and kept in `templates`,
        to take the trace of its name."""
        if raw is None:
            return ()
        if not isinstance(raw, list):
            self.problems.append(
                Problem(("cases",), f"expected a list of cases, got {describe(raw)}")
            )
            return ()
        cases: list[Case] = []
        first: dict[str, KeyPath] = {}
        for index, item in enumerate(raw):
            base = ("cases", index)
            name = case_name(item, f"case-{index}")
            self.names.append(name)
            if name in first:
                line, column = self.located.where(first[name])
                self.problems.append(
                    Problem(
                        (*base, "name"),
                        f"duplicate case name (first at {self.at(line, column)}); "
                        "give each case its own name",
                    )
                )
            else:
                first[name] = (*base, "name")
            built, problems = build_with_attempts(
                builder,
                item,
                name=name,
                base=base,
                locate=lambda path: self.at(*self.located.where(path)),
                warnings=self.peers,
            )
            self.problems.extend(problems)
            if traced and isinstance(item, dict) and not (OWN_TURNS & item.keys()):
                self.templates[name] = TraceCases.template(
                    item, base, self.at(*self.located.where(base))
                )
            else:
                cases.extend(built)
        return tuple(cases)

    def traces(self, raw: Any, builder: CaseBuilder, cases: tuple[Case, ...]) -> TraceCases | None:
        """The `traces:` files, checked to exist; they are read only while running."""
        source = parse_traces(raw, self.folder, self.problems)
        if source is None:
            return None
        taken = {case.name: case.location or self.source for case in cases}
        entries = self.file_builder(builder, source.label)
        return TraceCases(source, entries, builder, self.templates, taken)

    def dataset(
        self, data: Mapping[str, Any], builder: CaseBuilder, cases: tuple[Case, ...]
    ) -> Dataset | None:
        """The `dataset:` file, checked to exist; its lines are read only while running."""
        label = data.get("dataset")
        if label is None:
            return None
        if not isinstance(label, str) or not label:
            self.problems.append(
                Problem(("dataset",), f"expected a file path, got {describe(label)}")
            )
            return None
        path = Path(os.path.abspath(self.folder / label))
        if not path.is_file():
            self.problems.append(
                Problem(
                    ("dataset",),
                    f"dataset file '{label}' does not exist (looked for {path}); "
                    "dataset paths are relative to the suite file",
                )
            )
            return None
        taken = {case.name: case.location or self.source for case in cases}
        return Dataset(path, label, self.file_builder(builder, label), taken)

    def file_builder(self, builder: CaseBuilder, label: str) -> CaseBuilder:
        """`builder` for the cases of a file beside the suite: entries located at `label`,
        each configuration created once."""

        def make_entry(raw: Any, where: KeyPath) -> GraderEntry | None:
            with suite_dir(self.folder):
                return build_entry(raw, registry=self.registry, location=label)

        return attrs.evolve(builder, make_entry=EntryCache(make_entry))

    def place(self, problem: Problem) -> Problem:
        """Give a problem its `file:line:column`."""
        path = problem.path
        exact = problem.key and self.located.has_key(path)
        line, column = self.located.where(path, key=problem.key)
        if exact and path:
            path = path[:-1]  # the message names the key: point at its mapping's path
        where = problem.where or self.at(line, column)
        return Problem(path, problem.message, key=problem.key, where=where)

    def error(self) -> ConfigError:
        """One ConfigError with every problem, placed, in file order."""
        placed = [self.place(problem) for problem in self.problems]
        placed.sort(key=lambda p: tuple(int(n) for n in (p.where or "::0:0").rsplit(":", 2)[1:]))
        count = len(placed)
        return ConfigError(
            f"invalid suite file {self.source} ({count} problem{'s' if count != 1 else ''})",
            placed,
            source=self.source,
        )


def _warning_key(warning: Problem) -> str:
    """What a warning is kept once for: a peer framework's key (the problem is the key), or
    the words of a kind's warning about an option's value."""
    return str(warning.path[-1]) if warning.key else warning.message


@attrs.frozen
class CaseCheck:
    """How many cases a suite has, and the problem of each case that could not be loaded
    (a malformed dataset line: `data.jsonl:2: invalid JSON: ...`)."""

    cases: int
    problems: tuple[str, ...]


def check_cases(suite: Suite) -> CaseCheck:
    """Read every case of `suite` (its dataset streamed) and collect the problems."""
    cases = 0
    problems: list[str] = []
    for case in suite.cases():
        cases += 1
        if case.error is not None:
            problems.append(case.error)
    return CaseCheck(cases, tuple(problems))


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
