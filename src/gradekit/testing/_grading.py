"""Grading inside pytest: a suite file's cases as test items, and `assert_grade`.

The pytest plugin (`gradekit.testing.pytest_plugin`) hands each suite file it collects to
`SuiteFile`: the suite is loaded (a load error is the file's collection error, its lines
`file:line:column: key: message`), and each case becomes a `CaseItem` named after it, its
attempt and its number of turns in brackets (`greets[attempt1-2turns]`), its tags pytest
markers (`-m smoke`) registered as they are met, so `--strict-markers` accepts them.

A case is graded by `run_suite` on a suite of that one case (`attrs.evolve` of the loaded
suite, so its timeout, sandbox and folder apply): every lane, timeout and verdict rule of a
run applies, and nothing here grades. It is graded in the item's setup, so that pytest's two
outcomes of a test that did not pass follow gradekit's: a case that errored (a grader's error,
a dataset line that could not be read) is an error at setup, a case that failed is a failure
of its call. Both show why, one line a result (`failing_lines`), and the sample of each turn
that did not pass (`failing_samples`).

`assert_grade(sample, grader_or_entry)` grades one sample through `gradekit.grade`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import pytest

from gradekit.core.errors import ConfigError, GradeErrored
from gradekit.core.types import Grader, GradeResult, Sample
from gradekit.registry.entries import GraderEntry, build_entry
from gradekit.report.attempts import case_label
from gradekit.report.model import (
    CaseReport,
    ResultRecord,
    failing_lines,
    failing_samples,
    result_text,
)
from gradekit.report.samples import MAX_TEXT, sample_json, sample_lines
from gradekit.run.dispatch import grade
from gradekit.run.runner import run_suite
from gradekit.suite.load import load_suite
from gradekit.suite.model import Case, Suite

__all__ = ["CaseItem", "SuiteFile", "assert_grade", "case_id"]

# A tag pytest reads back whole as the name of a registered marker (it cuts the name at `:`
# or `(`) and `-m` as one word.
_MARKER = re.compile(r"[^\W_][\w.+\-/]*")
# pytest's own markers that change how a test runs: a tag of that name stays a keyword of
# its case (`-k`) but is not made a marker, so tagging a case `skip` never skips it.
_PYTEST_MARKERS = frozenset(
    {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
)


def case_id(case: Case) -> str:
    """A case's test name: its name, with its attempt and its number of turns (when more
    than one) in brackets, written as `-k` can match them (no spaces): `greets`,
    `greets[attempt1]`, `chat[3turns]`, `chat[attempt0-3turns]`."""
    shown = [] if case.attempt is None else [f"attempt{case.attempt}"]
    if len(case.turns) > 1:
        shown.append(f"{len(case.turns)}turns")
    return f"{case.name}[{'-'.join(shown)}]" if shown else case.name


class SuiteFile(pytest.File):
    """A suite file: one test item per case."""

    def collect(self) -> Iterator[pytest.Item]:
        """Load the suite and make each case an item; a suite that does not load is a
        collection error saying where and what (`file:line:column: key: message`); its
        warnings are warnings of the collection."""
        try:
            suite = load_suite(self.path)
        except ConfigError as error:
            raise self.CollectError(str(error)) from None
        for case in suite.cases():
            item = CaseItem.from_parent(self, name=case_id(case), suite=suite, case=case)
            for tag in case.tags:
                _mark(item, tag)
            yield item
        # What the loader accepted but noticed (another framework's key, say): in pytest's
        # warnings summary, as `gradekit run` prints it. Dataset lines add theirs as read.
        for line in suite.warnings:
            warnings.warn(f"gradekit suite: {line}", UserWarning, stacklevel=1)


def _mark(item: pytest.Item, tag: str) -> None:
    """`tag` as a marker of `item` (registered first, for `--strict-markers`); a tag that
    cannot be a registered marker (a space, a `:`, a leading `_`...) or that names one of
    pytest's own markers is a `-k` keyword of the item only."""
    if tag in _PYTEST_MARKERS or _MARKER.fullmatch(tag) is None:
        item.extra_keyword_matches.add(tag)
        return
    item.config.addinivalue_line("markers", f"{tag}: a gradekit suite tag")
    item.add_marker(tag)


class CaseItem(pytest.Item):
    """One case of a suite: graded at setup; an error there, a failure at its call."""

    def __init__(self, *, suite: Suite, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite
        self.case = case
        self.report: CaseReport | None = None

    def setup(self) -> None:
        """Grade the case through `run_suite`; an errored case is an error of this setup."""
        one = attrs.evolve(self.suite, cases=lambda: iter((self.case,)), case_count=1)
        graded = run_suite(one, jobs=1)
        if not graded.complete:  # Ctrl-C stopped the run: stop pytest too
            raise KeyboardInterrupt
        (self.report,) = graded.cases
        if self.report.outcome == "error":
            pytest.fail(self._why("errored", self.report), pytrace=False)

    def runtest(self) -> None:
        """Fail with the failing graders' messages and the samples when the case failed."""
        if self.report is not None and self.report.outcome == "fail":
            pytest.fail(self._why("failed", self.report), pytrace=False)

    def teardown(self) -> None:
        """Let the report go: a suite of many cases keeps none past its test."""
        self.report = None

    def _why(self, word: str, report: CaseReport) -> str:
        """Why the case did not pass (the first line is pytest's short summary), where it is
        written, and the samples of its turns that did not pass."""
        label = case_label(self.case.name, self.case.attempt)
        where = self.case.location
        if where is not None and where.startswith(f"{self.path}:"):  # as pytest names the file
            where = self.nodeid.split("::", 1)[0] + where[len(str(self.path)) :]
        written = f" ({where})" if where else ""
        lines = "\n".join(failing_lines(report))
        return "\n\n".join([lines, f"case {label} {word}{written}", *failing_samples(report)])

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Where the test comes from, for pytest's report: the suite file and the case."""
        return self.path, None, self.name


def assert_grade(
    sample: Sample | Mapping[str, Any],
    grader_or_entry: Grader | GraderEntry | Mapping[str, Any],
    *,
    timeout: float | None = None,
) -> GradeResult:
    """Grade `sample` with one grader and return its result when it passed.

    `sample`: a `Sample`, or a mapping of its fields (`{"output": "42", "expected": "42"}`).
    `grader_or_entry`: a grader (`gradekit.create`), a suite's `GraderEntry`, or an entry as
    a suite writes it (`{"kind": "numeric", "absolute_tolerance": 0.01}`: its common keys,
    such as `threshold`, apply). Raises AssertionError with the grader's message and the
    sample when it failed (an `advisory: true` entry never fails), GradeErrored when it
    could not grade (an error is not a failure), ConfigError for an entry that is not valid.
    `timeout`: seconds, for an entry that sets none (default 60).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    if not isinstance(sample, Sample):
        sample = Sample(**sample)
    entry = grader_or_entry
    if isinstance(entry, Mapping):
        built = build_entry(entry)
        if built is None:
            raise ConfigError("assert_grade: the entry says 'enabled: false'; enable it")
        entry = built
    (result,) = grade(sample, [entry], timeout=timeout)
    shown = "\n" + "\n".join(sample_lines(sample_json(sample, None, MAX_TEXT)))
    if result.outcome == "error":
        raise GradeErrored(result.name, result.error or "", shown)
    advisory = isinstance(entry, GraderEntry) and entry.advisory
    if result.outcome == "fail" and not advisory:
        raise AssertionError(f"{result.name} failed: {result_text(ResultRecord(result))}{shown}")
    return result
