"""The report model: what a run produced, case by case, and its summary.

The runner grades cases into `CaseReport` / `TurnReport` / `ResultRecord`; the report writers
and `--resume` read those. Plain, frozen data.

**A result's `details` as a report shows them** (`bounded_record`): bounded as the sample
is. Every text inside a result's details, at any depth (a composite's or a pack's children in
`details.results` included, keys too), is cut at the report's bound (`--max-text`, default
4096 bytes of UTF-8) with the marker of `samples.cut_text`. With `--no-samples` the bound is
the default one, and the keys where gradekit's own kinds copy the sample's texts
(`SAMPLE_COPIES`: equality's `output` and `expected`, a regex's match...) are left out, so the
report carries the verdicts and none of the texts graded. Details with nothing to cut or drop
are the grader's own object, unchanged: the report is byte for byte what it was."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from gradekit.core.types import FrozenDict, GradeResult, thaw
from gradekit.report.environment import Environment
from gradekit.report.samples import MAX_TEXT, SAMPLE_KEYS, SampleForm, cut_text, sample_lines
from gradekit.report.summary import GraderCounts, GraderSummary, Outcome, Summary, outcome_of
from gradekit.report.text import escaped, one_line, percent

if TYPE_CHECKING:  # the protocol of a run's baseline marks (gradekit.history implements it)
    from gradekit.report.marks import Marks

__all__ = [
    "SAMPLE_COPIES",
    "CaseReport",
    "GraderCounts",
    "GraderSummary",
    "Outcome",
    "ResultRecord",
    "SuiteReport",
    "Summary",
    "TurnReport",
    "advisory_errors",
    "bounded_record",
    "bounded_result",
    "failing_lines",
    "failing_samples",
    "graded_rate",
    "outcome_of",
    "result_text",
]


@attrs.frozen
class ResultRecord:
    """One grader's result on one turn, with the entry keys the verdict needs and what the
    runner measured: `duration_ms`, the time the grade took (the report's `duration_ms`; the
    result itself is the grader's, never changed)."""

    result: GradeResult
    advisory: bool = False
    weight: float = 1.0
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in reports (the `results` items of DESIGN.md)."""
        result = self.result
        details = result.details
        return {
            "kind": result.kind,
            "name": result.name,
            "passed": result.passed,
            "score": result.score,
            "message": result.message,
            "details": None if details is None else thaw(details),
            "error": result.error,
            "advisory": self.advisory,
            "weight": self.weight,
            "duration_ms": self.duration_ms,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResultRecord:
        """Rebuild a record from its JSON form (for `--resume`)."""
        result = GradeResult(
            kind=data["kind"],
            name=data["name"],
            passed=data["passed"],
            score=data["score"],
            message=data.get("message", ""),
            details=data.get("details"),
            error=data.get("error"),
        )
        return cls(
            result,
            advisory=data.get("advisory", False),
            weight=data.get("weight", 1.0),
            duration_ms=data.get("duration_ms", 0.0),
        )


@attrs.frozen
class TurnReport:
    """A graded turn. `errored` when a non-advisory result has an error; `skipped` when an
    earlier error ended the case (`fail_on_error`) before this turn ran. `sample`: what the
    turn graded, shown in its JSON form (`input`, `output`, `expected`, `tool_calls`,
    `messages`); None when the run records no samples."""

    index: int
    passed: bool
    score: float
    results: tuple[ResultRecord, ...] = ()
    errored: bool = False
    skipped: bool = False
    sample: SampleForm | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in reports: the turn's verdict, its results, and the keys of its
        sample (when it has one)."""
        data: dict[str, Any] = {
            "index": self.index,
            "passed": self.passed,
            "score": self.score,
            "errored": self.errored,
            "results": [record.to_dict() for record in self.results],
        }
        if self.skipped:
            data["skipped"] = True
        if self.sample is not None:
            data.update(self.sample.to_dict())
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnReport:
        """Rebuild from the JSON form."""
        return cls(
            index=data["index"],
            passed=data["passed"],
            score=data["score"],
            results=tuple(ResultRecord.from_dict(item) for item in data.get("results", ())),
            errored=data.get("errored", False),
            skipped=data.get("skipped", False),
            sample=SampleForm.of_turn_data(data),
        )


@attrs.frozen
class CaseReport:
    """A graded case. `outcome` is `pass`, `fail` or `error`; the three are disjoint.
    `metadata`: the case's metadata in its JSON form; None when the run records no samples.
    `tags`: its tags; `attempt`: its index among several attempts (in JSON only when set)."""

    name: str
    passed: bool
    score: float
    turns: tuple[TurnReport, ...] = ()
    errored: bool = False
    error: str | None = None
    duration_ms: float = 0.0
    metadata: SampleForm | None = None
    tags: tuple[str, ...] = ()
    attempt: int | None = None

    @property
    def outcome(self) -> Outcome:
        """`"error"` when any turn errored or the case could not load; else pass or fail."""
        return outcome_of(self.passed, self.errored or self.error is not None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in reports and in the `--resume` stream (the one definition of
        a case's JSON, which `gradekit.report.json.case_json` writes)."""
        data: dict[str, Any] = {"name": self.name}
        if self.attempt is not None:
            data["attempt"] = self.attempt
        data["passed"] = self.passed
        data["score"] = self.score
        data["errored"] = self.errored
        data["duration_ms"] = self.duration_ms
        data["turns"] = [turn.to_dict() for turn in self.turns]
        if self.error is not None:
            data["error"] = self.error
        if self.metadata is not None:
            data["metadata"] = self.metadata.to_dict()
        if self.tags:
            data["tags"] = list(self.tags)
        return data

    def turn_samples(self) -> dict[int, dict[str, Any]]:
        """The sample of each turn that carries one, as the JSON report shows it: turn index ->
        the sample keys that hold something (`SAMPLE_KEYS` order)."""
        samples: dict[int, dict[str, Any]] = {}
        for turn in self.turns:
            if turn.sample is None:
                continue
            form = turn.sample.to_dict()
            shown = {key: form[key] for key in SAMPLE_KEYS if form.get(key) is not None}
            if shown:
                samples[turn.index] = shown
        return samples

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseReport:
        """Rebuild from the JSON form."""
        return cls(
            name=data["name"],
            passed=data["passed"],
            score=data["score"],
            turns=tuple(TurnReport.from_dict(item) for item in data.get("turns", ())),
            errored=data.get("errored", False),
            error=data.get("error"),
            duration_ms=data.get("duration_ms", 0.0),
            metadata=SampleForm.read(data["metadata"])
            if isinstance(data.get("metadata"), Mapping)
            else None,
            tags=tuple(data.get("tags", ())),
            attempt=data.get("attempt"),
        )


@attrs.frozen
class SuiteReport:
    """The result of a run. `complete` is False when the run was interrupted.

    `cases` holds the case reports in the suite's order, unless the run was asked not to keep
    them (a run of millions of cases streams them to `on_case` and a JSONL file instead); then
    `summary` is still exact, because it was accumulated as the cases finished.
    `environment`: what the run was made with (versions, the suite's hash); None when unknown.
    """

    suite: str
    cases: tuple[CaseReport, ...]
    complete: bool = True
    duration_ms: float = 0.0
    stored_summary: Summary | None = None
    environment: Environment | None = None
    baseline: Marks | None = None
    """Each case marked against a baseline run (`Statistics(baseline=...)`); None without one."""

    @property
    def summary(self) -> Summary:
        """Counts over every case of the run."""
        if self.stored_summary is not None:
            return self.stored_summary
        return Summary.of(self.cases)

    @property
    def passed(self) -> bool:
        """The suite passes when the run completed and every case passed."""
        summary = self.summary
        return self.complete and summary.passed == summary.cases

    def to_dict(self) -> dict[str, Any]:
        """The JSON report of DESIGN.md (a baseline adds `summary.baseline`, cases' `baseline`)."""
        marks = self.baseline
        return {
            "suite": self.suite,
            "passed": self.passed,
            "complete": self.complete,
            "duration_ms": self.duration_ms,
            "summary": {**self.summary.to_dict(), **({} if marks is None else marks.summary())},
            **({} if self.environment is None else {"environment": self.environment.to_dict()}),
            "cases": [c.to_dict() if marks is None else marks.marked(c) for c in self.cases],
        }


# What a case's results say, as the text reports show it.


def graded_rate(summary: Summary) -> str | None:
    """The pass rate over the graded cases, shown beside the pass rate (over all cases) when
    some case errored; None when no case errored (the two rates are then the same)."""
    return percent(summary.graded_pass_rate) if summary.errored else None


def result_text(record: ResultRecord) -> str:
    """What a result says about itself: its error, else its message, else its score."""
    result = record.result
    if result.error is not None:
        # The message often repeats the error without its class name: say it once.
        if result.message in result.error:
            return result.error
        return f"{result.error} ({result.message})"
    return result.message or f"score {result.score:g}"


def failing_lines(case: CaseReport) -> list[str]:
    """Why `case` did not pass: one line per failing or errored non-advisory result,
    `turn N: grader: message`, or the case's own error when it could not be loaded."""
    lines: list[str] = []
    if case.error is not None:
        lines.append(one_line(case.error))
    for turn in case.turns:
        if turn.skipped:
            lines.append(f"turn {turn.index}: skipped (an earlier error ended the case)")
            continue
        for record in turn.results:
            if record.advisory or record.result.outcome == "pass":
                continue
            label = "error" if record.result.outcome == "error" else "failed"
            lines.append(
                f"turn {turn.index}: {escaped(record.result.name)} {label}: "
                f"{one_line(result_text(record))}"
            )
    if case.outcome == "error" and not any(" error: " in line for line in lines):
        # No verdict result errored: an advisory grader's error ended the case.
        lines[:0] = [
            f"turn {index}: {escaped(record.result.name)} error (advisory): "
            f"{one_line(result_text(record))}"
            for index, record in advisory_errors(case)
        ]
    if not lines and case.outcome == "fail":
        lines.append("the case's policy did not pass")
    return lines


def failing_samples(case: CaseReport) -> list[str]:
    """What the agent was given and did in each turn of `case` that did not pass, when the
    report carries the samples: one text block a turn, `turn N:` then its sample's lines."""
    samples = case.turn_samples()
    return [
        "\n".join([f"turn {turn.index}:", *sample_lines(samples[turn.index])])
        for turn in case.turns
        if not (turn.skipped or turn.passed) and turn.index in samples
    ]


def advisory_errors(case: CaseReport) -> list[tuple[int, ResultRecord]]:
    """`(turn index, record)` of every advisory result of `case` that errored."""
    return [
        (turn.index, record)
        for turn in case.turns
        for record in turn.results
        if record.advisory and record.result.outcome == "error"
    ]


SAMPLE_COPIES: Final[Mapping[str, frozenset[str]]] = {
    "equality": frozenset(("output", "expected")),
    "numeric": frozenset(("output", "expected")),
    "regex": frozenset(("match", "groups", "named")),
    "json": frozenset(("difference",)),
}
"""The keys of the details of gradekit's own kinds that hold the sample's texts (or parts of
them): left out of a report without samples."""


def bounded_result(result: GradeResult, max_text: int | None) -> GradeResult:
    """`result` with its details as a report shows them (see the module): `max_text` the
    report's bound, None for a report without samples. `result` itself when nothing changes."""
    details = result.details
    if details is None:
        return result
    if max_text is None:
        shown = _without_copies(result.kind, details)
        if not _fits(shown, MAX_TEXT // 4):
            shown = _bounded(shown, MAX_TEXT)
    elif _fits(details, max_text // 4):  # the usual: short texts, nothing to build
        return result
    else:
        shown = _bounded(details, max_text)
    if shown is details:
        return result
    return GradeResult(
        result.kind,
        result.name,
        result.passed,
        result.score,
        result.message,
        shown,
        result.error,
        result.duration_ms,
    )


def bounded_record(record: ResultRecord, max_text: int | None) -> ResultRecord:
    """`record` with its result's details bounded (`bounded_result`); itself when unchanged."""
    result = bounded_result(record.result, max_text)
    if result is record.result:
        return record
    return ResultRecord(result, record.advisory, record.weight, record.duration_ms)


_PLAIN: Final = frozenset((int, float, bool, type(None)))


def _fits(value: Any, limit: int) -> bool:
    """True when no text in `value` is longer than `limit` characters (so none is longer
    than 4 * `limit` bytes): a walk that builds nothing, for the details of nearly every
    grade. False says only that `_bounded` must look."""
    kind = type(value)
    if kind is str:
        return len(value) <= limit
    if kind is FrozenDict or kind is dict or isinstance(value, Mapping):
        for key, item in value.items():
            if type(key) is str and len(key) > limit:
                return False
            item_kind = type(item)
            if item_kind is str:
                if len(item) > limit:
                    return False
            elif item_kind not in _PLAIN and not _fits(item, limit):
                return False
        return True
    if kind is tuple or kind is list:
        for item in value:
            item_kind = type(item)
            if item_kind is str:
                if len(item) > limit:
                    return False
            elif item_kind not in _PLAIN and not _fits(item, limit):
                return False
        return True
    return True


def _bounded(value: Any, bound: int) -> Any:
    """`value` with each text in it cut at `bound`; `value` itself when none is cut."""
    kind = type(value)
    if kind is str:
        return cut_text(value, bound)
    if isinstance(value, Mapping):
        changed = False
        shown: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = cut_text(key, bound) if type(key) is str else key
            new_item = _bounded(item, bound)
            changed = changed or new_key is not key or new_item is not item
            shown[new_key] = new_item
        return shown if changed else value
    if isinstance(value, (list, tuple)):
        items = [_bounded(item, bound) for item in value]
        if any(new is not old for new, old in zip(items, value, strict=True)):
            return items
        return value
    return value


def _without_copies(kind: str, details: Mapping[str, Any]) -> Mapping[str, Any]:
    """`details` without the keys where `kind` copies the sample's texts, and likewise for
    each child result in `details.results` (composites, packs); itself when nothing goes."""
    copies = SAMPLE_COPIES.get(kind)
    shown: Mapping[str, Any] = details
    if copies is not None and not copies.isdisjoint(details):
        shown = {key: item for key, item in details.items() if key not in copies}
    children = shown.get("results")
    if isinstance(children, (list, tuple)):
        kept = [_child_without_copies(child) for child in children]
        if any(new is not old for new, old in zip(kept, children, strict=True)):
            shown = {**shown, "results": kept}
    return shown


def _child_without_copies(child: Any) -> Any:
    if not isinstance(child, Mapping):
        return child
    kind, details = child.get("kind"), child.get("details")
    if not isinstance(kind, str) or not isinstance(details, Mapping):
        return child
    shown = _without_copies(kind, details)
    return child if shown is details else {**child, "details": shown}
