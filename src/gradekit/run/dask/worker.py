"""The worker's side: grade one packed batch of cases, return their reports packed.

Runs in a Dask worker process. A suite's grader entries are created once per worker per suite
(cached by the suite's spec) through the worker's own registry, so kinds resolve through the
plugins installed on the worker; a kind that does not resolve there is a stand-in grader
whose every result is an error naming the worker (the run goes on). The cases are built from
their lines by the suite loader's `CaseBuilder` and graded by gradekit's own runner, the public
`run_suite` over an in-memory suite of the batch, so timeouts, isolation, verdicts and the
checks on every result are those of a local run.
"""

from __future__ import annotations

import collections
import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

import attrs

from gradekit import GradeResult, Sample, Suite, run_suite
from gradekit._errors import ConfigError, ExecutorError
from gradekit._load_context import suite_dir
from gradekit._types import error_text
from gradekit.registry.entries import GraderEntry
from gradekit.registry.registry import default_registry
from gradekit.run.case import unloadable
from gradekit.run.dask._pack import (
    ATTEMPT,
    FORMAT,
    MESSAGES,
    OWN_GRADERS,
    PackedBatch,
    pack_batch,
    pack_reports,
    suite_folder,
)
from gradekit.run.options import GraderDefaults, Outputs
from gradekit.suite.cases import CaseBuilder
from gradekit.suite.dataset import EntryCache, problem_text
from gradekit.suite.model import Case, Policy
from gradekit.suite.parse import KeyPath

__all__ = ["Unavailable", "grade_packed"]

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
    and the run's settings."""

    suite: Suite
    shared: CaseBuilder
    own: CaseBuilder
    jobs: int
    isolation: Any
    memory_limit_mb: int | None
    max_text: int | None = 4096


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
    cases = [_case(built, line, address) for line in lines]

    def batch_cases() -> Iterator[Case]:
        return iter(cases)

    report = run_suite(
        attrs.evolve(built.suite, cases=batch_cases, case_count=len(cases)),
        jobs=built.jobs,
        defaults=GraderDefaults(isolation=built.isolation, memory_limit_mb=built.memory_limit_mb),
        outputs=Outputs(samples=built.max_text is not None, max_text=built.max_text or 4096),
    )
    return pack_batch(report.cases)


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
    return _Built(
        suite=Suite(data["suite"], lambda: iter(()), graders, policy, path, data["timeout"]),
        shared=CaseBuilder(graders, entries, base),
        own=CaseBuilder((), entries, base),
        jobs=data["jobs"],
        isolation=data["isolation"],
        memory_limit_mb=data["memory_limit_mb"],
        max_text=data.get("max_text", 4096),
    )


def entry_from_spec(spec: Any, folder: str | None, address: str) -> GraderEntry:
    """The entry `spec` (see `_pack.entry_spec`) with its grader created on this worker, or a
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
