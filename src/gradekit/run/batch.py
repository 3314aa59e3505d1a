"""The inline lane: many cases whose graders are all inline (pure, fast), graded one after
another in one worker thread, without a task or a thread per grade.

A batch applies the rules every path applies, in the same functions: `finish` checks what each
grader returned, `tally` decides each turn and `case_decision` each case, `SummaryBuilder`
counts them; turns alike in everything those rules read are decided once and counted together
(`gradekit.run.alike`).
It records which grade is running so that the runner can time it out (see
`gradekit.run.loop`), times a grade out itself when it returns past its timeout (a grade that
held the GIL, as a regex backtracking in C does, kept the watch from acting), and counts the
cases it finished into a summary of its own, so that the thread receiving them need not walk
them again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from gradekit._interrupts import GRADER_RAISES, is_ctrl_c
from gradekit._types import GradeResult, Sample, error_text
from gradekit.registry.abilities import has_well_formed_results
from gradekit.registry.entries import GraderEntry
from gradekit.report.builders import case_report, result_record, turn_report
from gradekit.report.case_text import CaseText, FinishedCase
from gradekit.report.case_writers import CaseWriter, TextCaseWriter, case_writer
from gradekit.report.details import bounded_result
from gradekit.report.model import ResultRecord, TurnReport, outcome_of
from gradekit.report.samples import SampleForm
from gradekit.report.summary import SummaryBuilder
from gradekit.run.alike import Alikes, TurnsAlike
from gradekit.run.grade import skipped_turn
from gradekit.run.results import error_result, finish, is_final, timed_out
from gradekit.run.settings import Settings
from gradekit.run.verdict import Decision, case_decision
from gradekit.suite.model import Case, Policy

__all__ = ["BatchState", "GradeInProgress", "GradeKey", "grade_batch"]


_UNUSED_WRITER: Final = TextCaseWriter()


class GradeKey(NamedTuple):
    """Which grade of a run: the case's position in the suite, the turn's index in its case,
    and the entry's index in its turn."""

    case: int
    turn: int
    grader: int


class GradeInProgress(NamedTuple):
    """The grade a batch worker is running: when it started (on the `time.perf_counter`
    clock), its timeout in seconds, and which grade it is (see `GradeKey`).

    A tuple, never changed: the worker replaces the whole of it for each grade, so the thread
    that watches it always reads the fields of one grade."""

    started: float
    seconds: float
    case: int
    turn: int
    grader: int

    def key(self) -> GradeKey:
        """Which grade this is."""
        return GradeKey(self.case, self.turn, self.grader)


# A grade's GradeInProgress made without the named tuple's Python-level `__new__`: once per
# grade, it costs half of that.
_in_progress: Final = tuple.__new__


class BatchState:
    """What a batch worker is doing, shared with the runner that watches it.

    `grading` is the grade in progress. `finished` counts the cases finished, in the batch's
    order, and `summary` counts their results; `done` holds their (position, report) pairs
    when the batch keeps reports (`keep`): each a `CaseReport`, or only its JSON text (a
    `CaseText`) when the batch `encode`s (a run that streams its cases to a JSON report or a
    log, and nothing else reads them). Once `abandoned` is set the worker stops at the
    end of the case in progress (a batch that keeps reports leaves that case out, for the
    runner has copied `done`; one that counts counts it). `stopped` is set when the worker has
    stopped or finished: from then on `summary` and `finished` agree."""

    __slots__ = (
        "abandoned",
        "done",
        "encode",
        "finished",
        "grading",
        "keep",
        "stopped",
        "summary",
    )

    def __init__(self, *, keep: bool = True, encode: bool = False) -> None:
        self.grading: GradeInProgress | None = None
        self.keep: Final = keep
        self.encode: Final = keep and encode
        self.done: list[tuple[int, FinishedCase]] = []
        self.finished = 0
        self.summary: Final = SummaryBuilder()
        self.abandoned = False
        self.stopped: Final = threading.Event()


class _Step:
    """An entry as the batch loop uses it, read once per distinct tuple of graders."""

    __slots__ = (
        "advisory",
        "entry",
        "final",
        "grade",
        "seconds",
        "weight",
        "well_formed",
        "write",
    )

    def __init__(self, entry: GraderEntry, settings: Settings, writer: CaseWriter) -> None:
        self.entry: Final = entry
        self.grade: Final[Callable[[Sample], Any]] = entry.grader.grade
        self.seconds: Final = settings.timeout_of(entry)
        self.well_formed: Final = has_well_formed_results(entry)
        self.final: Final = is_final(entry, self.well_formed)
        """What the grader returns is the result as it is (`finish` would not change it)."""
        self.advisory: Final = entry.advisory
        self.weight: Final = entry.weight
        self.write: Final = writer.result_writer(
            entry.kind, entry.name, entry.advisory, entry.weight
        )
        """Writes one of its results as a part of its case's text (see `case_writers`)."""


def _same(entries: tuple[GraderEntry, ...], others: tuple[GraderEntry, ...]) -> bool:
    """The same entry objects (a dataset's lines reuse them, each in a tuple of its own)."""
    return len(entries) == len(others) and all(
        entry is other
        for entry, other in zip(entries, others)  # noqa: B905 - lengths checked
    )


def grade_batch(  # noqa: PLR0915 - one loop, kept flat: it runs once per grade
    items: Sequence[tuple[int, Case]],
    state: BatchState,
    preset: Mapping[GradeKey, ResultRecord],
    settings: Settings,
    default_policy: Policy,
) -> BatchState:
    """Grade cases whose graders are all inline, in this thread, one grade after another.

    Fills `state` (see `BatchState`) and returns it. Reports are built only when
    `state.keep` (as their JSON texts alone when `state.encode`); otherwise each case is only
    counted (a run that keeps no report and streams none need not build them). `preset`
    holds grades decided already (the timeout of a grade that hung in an earlier attempt at
    this batch); those grades are not run again.
    """
    clock = time.perf_counter
    keep, done, summary = state.keep, state.done, state.summary
    encode = state.encode
    build = keep and not encode  # report objects; else, when encoding, their texts
    max_text = settings.max_text
    samples = keep and max_text is not None
    bound = 0 if max_text is None else max_text
    alikes = Alikes(summary)
    # Most turns share their graders' tuple with the turn before, and their case's policy.
    entries: tuple[GraderEntry, ...] = ()
    steps: list[_Step] = []
    last_policy: Policy | None = None
    alike: TurnsAlike | None = None
    turns: list[TurnReport] = []
    records: list[ResultRecord] = []
    turn_parts: list[Any] = []
    record_parts: list[Any] = []
    writer = case_writer() if encode else _UNUSED_WRITER  # orjson imported only to write
    no_sample = writer.no_sample
    try:
        for position, case in items:
            started = now = clock()
            policy = case.policy or default_policy
            if build:
                turns = []
            elif encode:
                turn_parts = []
            ran: list[Decision] = []
            ended = False
            for index, turn in enumerate(case.turns):
                if ended:
                    if build:
                        turns.append(skipped_turn(index))
                    elif encode:
                        turn_parts.append(writer.skipped_turn(skipped_turn(index)))
                    continue
                graders = turn.graders
                if graders is not entries and not _same(graders, entries):
                    entries, alike = graders, None
                    steps = [_Step(entry, settings, writer) for entry in entries]
                if alike is None or policy is not last_policy:
                    alike, last_policy = alikes.of(entries, policy), policy
                sample = turn.sample
                results: list[GradeResult] = []
                if build:
                    records = []
                elif encode:
                    record_parts = []
                for number, step in enumerate(steps):
                    known = preset.get(GradeKey(position, index, number)) if preset else None
                    if known is None:
                        state.grading = _in_progress(
                            GradeInProgress, (now, step.seconds, position, index, number)
                        )
                        try:
                            result = step.grade(sample)
                            if not step.final:
                                result = finish(step.entry, result, step.well_formed)
                        except GRADER_RAISES as error:
                            if is_ctrl_c(error):
                                raise
                            result = error_result(step.entry, error_text(error))
                        later = clock()
                        if later - now > step.seconds:
                            # It held the thread (and the GIL: a regex backtracking in C)
                            # past its timeout, so the watch could not act: timed out all
                            # the same, as if the watch had.
                            overran = timed_out(step.entry, step.seconds)
                            result = overran.result
                            if build:
                                records.append(overran)
                            elif encode:
                                record_parts.append(writer.record(overran))
                        elif build:
                            duration = (later - now) * 1000.0
                            shown = bounded_result(result, max_text)
                            records.append(
                                result_record(shown, step.advisory, step.weight, duration)
                            )
                        elif encode:
                            duration = (later - now) * 1000.0
                            record_parts.append(
                                step.write(bounded_result(result, max_text), duration)
                            )
                        now = later
                    else:
                        result = known.result
                        if build:
                            records.append(known)
                        elif encode:
                            record_parts.append(writer.record(known))
                    results.append(result)
                decision = alike.decide(results, entries)
                if case.attempt is not None:  # its graders' scores are clustered by case
                    summary.attempts.score(case.name, results)
                ran.append(decision)
                if encode:
                    turn_parts.append(
                        writer.turn(
                            index,
                            decision.passed,
                            decision.score,
                            decision.errored,
                            record_parts,
                            False,
                            writer.sample(sample, turn.messages, bound) if samples else no_sample,
                        )
                    )
                elif build:
                    turns.append(
                        turn_report(
                            index,
                            decision.passed,
                            decision.score,
                            tuple(records),
                            decision.errored,
                            False,
                            SampleForm(sample, turn.messages, max_text) if samples else None,
                        )
                    )
                ended = decision.ended
            passed, score, errored, _ = case_decision(ran)
            if keep:
                duration = (clock() - started) * 1000.0
            if encode:
                text = writer.case(
                    case.name,
                    passed,
                    score,
                    turn_parts,
                    errored,
                    None,
                    duration,
                    writer.metadata(case.metadata, bound) if samples else None,
                    case.tags,
                    case.attempt,
                )
                outcome = outcome_of(passed, errored)
                finished: FinishedCase = CaseText(text, outcome, case.name, case.attempt)
            elif build:
                metadata = SampleForm(case.metadata, None, max_text) if samples else None
                finished = case_report(
                    case.name,
                    passed,
                    score,
                    tuple(turns),
                    errored,
                    None,
                    duration,
                    metadata,
                    case.tags,
                    case.attempt,
                )
            if keep:
                # No report once abandoned: the runner copied `done` (a case left out is graded
                # again by the batch's next attempt).
                if state.abandoned:
                    break
                done.append((position, finished))
            summary.count_case(passed, errored)
            if case.attempt is not None:
                summary.attempts.count(case.name, passed, errored)
            state.finished += 1
            if state.abandoned:
                break
    finally:
        alikes.flush()
        state.stopped.set()
    return state
