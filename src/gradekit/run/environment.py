"""The environment a run records in its report (`gradekit.report.environment`): the suite
file's hash taken when the run starts, the kinds its cases use noted as the runner reads them
(a dataset is read once), and who provided each kind, asked of the registry when the kind is
first seen. Everything that reads files (versions, metadata) happens then, never at the end of
the run: a grader that hung keeps its thread spinning, and every file read after it waits for
the GIL again and again (seconds for an import)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs

from gradekit.registry.entries import GraderEntry
from gradekit.registry.plugins import BUILTIN_DISTRIBUTION, BUILTIN_KINDS
from gradekit.registry.registry import Registry, default_registry
from gradekit.report.environment import (
    Environment,
    KindSource,
    file_sha256,
    gradekit_version,
    python_version,
)
from gradekit.run.composite import _Composite
from gradekit.suite.model import Case, Suite

__all__ = ["EnvironmentNotes"]


class EnvironmentNotes:
    """What one run notes for its report's environment. `suite` is the suite to run: the same,
    with its cases noted as they are read; `environment()` is the result."""

    def __init__(self, suite: Suite, registry: Registry = default_registry) -> None:
        self._registry = registry
        self._sha256 = file_sha256(suite.path) if suite.path else None
        self._gradekit = gradekit_version()
        self._python = python_version()
        self._kinds: dict[str, KindSource] = {}
        self._note(suite.graders)
        cases = suite.cases
        self.suite = attrs.evolve(suite, cases=lambda: self._noted(cases()))

    def _noted(self, cases: Iterator[Case]) -> Iterator[Case]:
        note = self._note
        for case in cases:
            for turn in case.turns:
                note(turn.graders)
            yield case

    def _note(self, entries: Iterable[GraderEntry]) -> None:
        kinds = self._kinds
        for entry in entries:
            if entry.kind not in kinds:
                kinds[entry.kind] = self._source(entry.kind)
            if isinstance(entry.grader, _Composite):
                self._note(entry.grader.children)

    def environment(self) -> Environment:
        """The environment of the run so far (the kinds of the cases read until now)."""
        return Environment(
            gradekit=self._gradekit,
            python=self._python,
            suite_sha256=self._sha256,
            kinds=dict(sorted(self._kinds.items())),
        )

    def _source(self, kind: str) -> KindSource:
        info = self._registry.provider(kind)
        if info is None:  # created by another registry than the default one
            return KindSource(None, None)
        if info.distribution == BUILTIN_DISTRIBUTION and kind in BUILTIN_KINDS:
            return KindSource(BUILTIN_DISTRIBUTION, self._gradekit)
        if not info.version:  # a factory registered in code
            return KindSource(None, None)
        return KindSource(info.distribution, info.version)
