"""The worker's side: each worker's set-up (`dask_setup`), and the task that grades one
packed batch of cases and returns their reports packed (`grade_packed`).

Runs in a Dask worker process. A suite's grader entries are created once per worker per suite
(cached by the suite's spec) through the worker's own registry, so kinds resolve through the
plugins installed on the worker; a kind that does not resolve there is a stand-in grader
whose every result is an error naming the worker (the run goes on). The cases are built from
their lines by the suite loader's `CaseBuilder` and graded by gradekit's own local run (the
`Collection` of `gradekit.run.collect` that `run_suite` drives, over an in-memory suite of the
batch), so timeouts, isolation, verdicts and the checks on every result are those of a local
run. It never imports the runner nor the `gradekit` facade: the runner imports this package
(`executor="dask"`).

Set-up: a terminal's Ctrl-C reaches every process of its foreground group, the local
cluster's worker processes too: they would print tracebacks and die mid-batch. The driver
stops the run, takes the batches that finished and closes the cluster itself, so the workers
of the local cluster a `DaskExecutor` starts (this module is their Dask preload) ignore
SIGINT, as gradekit's process-isolation children do.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

import attrs

from gradekit.core.context import RunContext, current_run, suite_dir
from gradekit.core.errors import ConfigError, ExecutorError
from gradekit.core.types import GradeResult, Sample, error_text
from gradekit.registry.entries import GraderEntry, PeerWarnings, build_entry
from gradekit.registry.registry import default_registry
from gradekit.report.model import CaseReport
from gradekit.run.collect import Collection, entry_kinds
from gradekit.run.dask.pack import (
    ATTEMPT,
    FORMAT,
    MESSAGES,
    OWN_GRADERS,
    PackedBatch,
    RoutedBatch,
    line_cases,
    pack_batch,
    pack_reports,
    suite_folder,
)
from gradekit.run.exits import detach_stdin, refusing_exits
from gradekit.run.grade import unloadable
from gradekit.run.settings import Settings
from gradekit.suite.cases import CaseBuilder
from gradekit.suite.dataset import Dataset, EntryCache, file_lines, problem_text
from gradekit.suite.model import Case, KeyPath, Policy, Suite

__all__ = ["Unavailable", "dask_setup", "grade_lines", "grade_packed"]

_KEPT_SUITES: Final = 4
"""Suites whose graders a worker keeps between batches (the most recently used)."""


@attrs.frozen
class Unavailable:
    """Stands in on a worker for a grader that could not be created there: every grade is an
    error result saying why (`error`, which names the worker)."""

    kind: str
    name: str
    error: str
    inline: ClassVar[bool] = True

    def grade(self, sample: Sample) -> GradeResult:
        """The error result."""
        return GradeResult.of_error(self.kind, self.name, self.error)


@attrs.frozen
class _Built:
    """One suite as a worker grades it: the suite (cases replaced per batch), how its lines
    become cases (`shared`: after the suite-level entries; `own`: lines listing every entry),
    and the run's settings and cases graded at once."""

    suite: Suite
    shared: CaseBuilder
    own: CaseBuilder
    settings: Settings
    jobs: int
    dataset: Dataset | None = None
    """How the suite's dataset lines become cases (when the spec says, see `grade_lines`)."""


_suites: collections.OrderedDict[bytes, _Built] = collections.OrderedDict()
_lock = threading.Lock()


def grade_packed(spec: bytes, batch: bytes) -> PackedBatch | bytes:
    """Grade the batch (JSONL case lines) of the suite `spec`; return their reports packed
    (`PackedBatch`: the JSONL of the reports in the batch's order, their outcomes, their
    summary). Never raises for a case's fault. A spec this worker cannot use gives one errored
    report a case, as the bare JSONL blob (`pack_reports`), which a driver of any version
    reads: every case then says why."""
    address = worker_address()
    lines = [line for line in batch.split(b"\n") if line]
    try:
        built = _built(spec, address)
    except Exception as error:  # a spec this worker cannot use: every case says why
        text = f"{error_text(error)} (on Dask worker {address})"
        return pack_reports([unloadable(Case(_name(line), (), error=text)) for line in lines])
    return pack_batch(_graded(built, [_case(built, line, address) for line in lines]))


def grade_lines(spec: bytes, first: int, lines: bytes) -> RoutedBatch | bytes:
    """Grade the dataset lines `lines` (as the file holds them, from its line number `first`,
    blank ones included) of the suite `spec`: each line not blank becomes its case as the
    suite loader makes it (`Dataset.case_at`), here. Returns the reports packed with the
    cases' kinds and peer warnings (`RoutedBatch`); a spec this worker cannot use
    gives the bare JSONL blob of one errored report a line, as `grade_packed` does."""
    address = worker_address()
    try:
        built = _built(spec, address)
        if built.dataset is None:
            raise ExecutorError("the driver sent dataset lines without the dataset's spec")
    except Exception as error:  # a spec this worker cannot use: every case says why
        text = f"{error_text(error)} (on Dask worker {address})"
        count = sum(not line.isspace() for line in file_lines(lines))
        return pack_reports([unloadable(Case("?", (), error=text))] * count)
    dataset = attrs.evolve(built.dataset, warnings=PeerWarnings())
    cases = line_cases(dataset, first, lines)
    kinds: set[str] = set()
    for case in cases:
        for turn in case.turns:
            entry_kinds(turn.graders, kinds)
    packed = pack_batch(_graded(built, cases))
    return RoutedBatch(packed, tuple(sorted(kinds)), tuple(dataset.warnings.keyed()))


def _graded(built: _Built, cases: list[Case]) -> tuple[CaseReport, ...]:
    """The reports of `cases`, graded by a local run of the suite `built` (in their order)."""

    def batch_cases() -> Iterator[Case]:
        return iter(cases)

    suite = attrs.evolve(built.suite, cases=batch_cases, case_count=len(cases))
    # What `run_suite` does around a local run: a grader's os._exit is its error result,
    # graders read no stdin, and the batch's grades share a run context of their own.
    restore = detach_stdin()
    try:
        with refusing_exits(), RunContext(current_run().options):
            collection = Collection(suite, built.settings, built.jobs, None, True, None, None)
            report = collection.run()
    finally:
        restore()
    return report.cases


def dask_setup(worker: Any) -> None:
    """Called by Dask in each worker process of a local cluster as it starts (see the
    module): the worker ignores Ctrl-C."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def worker_address() -> str:
    """The address of the Dask worker running this (its pid outside a worker)."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"(pid {os.getpid()})"


def _name(line: bytes) -> str:
    try:
        name = json.loads(line).get("name")
    except (ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else "?"


def _case(built: _Built, line: bytes, address: str) -> Case:
    raw = json.loads(line)
    name = raw.get("name")
    builder = built.own if raw.pop(OWN_GRADERS, False) else built.shared
    turns = raw.get("turns")
    messages = [t.pop(MESSAGES, None) if isinstance(t, dict) else None for t in turns or ()]
    attempt = raw.pop(ATTEMPT, None)
    case, problems = builder.build(raw, name=name)
    if case is None:
        found = "; ".join(problem_text(problem) for problem in problems)
        text = f"case '{name}' cannot be built on Dask worker {address}: {found}"
        return Case(name, (), error=text, attempt=attempt)
    if attempt is not None:
        case = attrs.evolve(case, attempt=attempt)
    if any(found is not None for found in messages):
        with_messages = zip(case.turns, messages, strict=True)
        turns = tuple(attrs.evolve(turn, messages=found) for turn, found in with_messages)
        case = attrs.evolve(case, turns=turns)
    return case


def _built(spec: bytes, address: str) -> _Built:
    with _lock:
        built = _suites.get(spec)
        if built is not None:
            _suites.move_to_end(spec)
            return built
        built = _build(json.loads(spec), address)
        _suites[spec] = built
        if len(_suites) > _KEPT_SUITES:
            _suites.popitem(last=False)
        return built


def _build(data: Mapping[str, Any], address: str) -> _Built:
    if data.get("format") != FORMAT:
        raise ExecutorError(
            f"the driver sent batches in format {data.get('format')!r} and this worker's "
            f"gradekit reads format {FORMAT}: install the same gradekit on the driver and on "
            "every worker"
        )
    path = data["path"]
    folder = suite_folder(path)

    def make_entry(raw: Any, where: KeyPath) -> GraderEntry:
        return entry_from_spec(raw, folder, address)

    graders = tuple(make_entry(raw, ()) for raw in data["graders"])
    policy = Policy(data["policy"]["mode"], data["policy"]["threshold"])
    entries = EntryCache(make_entry)
    base = Path(folder) if folder is not None else Path.cwd()
    suite = Suite(data["suite"], lambda: iter(()), graders, policy, path, data["timeout"])
    settings = Settings(
        timeout=suite.timeout,
        isolation=data["isolation"],
        memory_limit_mb=data["memory_limit_mb"],
        suite_dir=folder,
        sandbox=suite.sandbox,
        max_text=data.get("max_text", 4096),
    )
    lines = data.get("dataset")
    dataset = None
    if lines is not None:
        label = lines["label"]

        def line_entry(raw: Any, where: KeyPath) -> GraderEntry | None:
            with suite_dir(folder):  # as the suite loader makes a dataset line's entries
                return build_entry(raw, registry=default_registry, location=label)

        builder = CaseBuilder(
            graders,
            EntryCache(line_entry),
            base,
            strict=lines["strict"],
            suite_tags=tuple(lines["tags"]),
        )
        dataset = Dataset(Path(folder or ".") / label, label, builder, lines["taken"])
    return _Built(
        suite=suite,
        shared=CaseBuilder(graders, entries, base),
        own=CaseBuilder((), entries, base),
        settings=settings,
        jobs=data["jobs"],
        dataset=dataset,
    )


def entry_from_spec(spec: Any, folder: str | None, address: str) -> GraderEntry:
    """The entry `spec` (see `pack.CasePacker.entry`) with its grader created on this worker, or a
    stand-in (`Unavailable`) when the kind cannot be created here."""
    if not isinstance(spec, Mapping) or not isinstance(spec.get("kind"), str):
        raise ConfigError(f"not a grader entry spec: {spec!r}")
    kind, name = spec["kind"], spec["name"]
    config = spec.get("config", {})
    grader: Any
    try:
        with suite_dir(folder):
            grader = default_registry.create(kind, name, config)
    except Exception as error:
        grader = Unavailable(
            kind,
            name,
            f"{error_text(error)} (creating grader '{name}' on Dask worker {address}: every "
            "worker needs the suite's kinds installed, and the suite's folder for `code` "
            "graders)",
        )
    return GraderEntry(
        grader=grader,
        kind=kind,
        name=name,
        weight=spec.get("weight", 1.0),
        advisory=spec.get("advisory", False),
        threshold=spec.get("threshold"),
        timeout=spec.get("timeout"),
        isolation=spec.get("isolation"),
        fail_on_error=spec.get("fail_on_error", False),
        config=config,
        location=spec.get("location"),
    )
