"""The inline lane: many cases whose graders are all `inline` (pure, fast), graded one after
another in one worker thread, without a task or a thread per grade.

It records which grade is running so that the runner can time it out (see `gradekit.run.loop`),
and counts the cases it finished into a summary of its own, so that the thread receiving them
need not walk them again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from gradekit._interrupts import GRADER_RAISES, is_ctrl_c
from gradekit._json_check import plain_json
from gradekit._types import GradeResult, Sample, error_text, is_well_formed
from gradekit.registry.entries import GraderEntry
from gradekit.report.model import (
    CaseReport,
    ResultRecord,
    SummaryBuilder,
    TurnReport,
    case_report,
    result_record,
    turn_report,
)
from gradekit.run.case import _skipped
from gradekit.run.results import FRESH_REFS, error_result, finish, getrefcount
from gradekit.run.settings import Settings
from gradekit.run.verdict import Tally, case_outcome, turn_outcome
from gradekit.suite.model import Case, Policy

__all__ = ["GradeKey", "Mark", "Progress", "grade_batch"]


GradeKey = tuple[int, int, int]
"""(case position, turn index, entry index): one grade of a run."""


Mark = tuple[float, float, int, int, int]
"""The grade in progress: (start on the `time.perf_counter` clock, timeout in seconds, case
position, turn index, entry index)."""


class Progress:
    """What a batch worker is doing, shared with the runner that watches it.

    `mark` is the grade in progress (see `Mark`). `finished` counts the cases finished, in the
    batch's order, and `summary` counts their results; `done` holds their (position, report)
    pairs when the batch keeps reports (`keep`). Once `abandoned` is set the worker stops at the
    end of the case in progress (a batch that keeps reports leaves that case out, for the
    runner has copied `done`; one that counts counts it). `stopped` is set when the worker has
    stopped or finished: from then on `summary` and `finished` agree."""

    __slots__ = ("abandoned", "done", "finished", "keep", "mark", "stopped", "summary")

    def __init__(self, *, keep: bool = True) -> None:
        self.mark: Mark | None = None
        self.keep = keep
        self.done: list[tuple[int, CaseReport]] = []
        self.finished = 0
        self.summary = SummaryBuilder()
        self.abandoned = False
        self.stopped = threading.Event()


_REMEMBERED_VERDICTS: Final = 256
"""Distinct turn tallies whose verdicts a batch remembers, per policy."""


_Step = tuple[GraderEntry, Callable[[Sample], Any], float, float | None, bool, float, bool, bool]
"""An entry as the batch loop uses it: (entry, its grader's `grade`, timeout, threshold,
advisory, weight, fail_on_error, whether its results are well-formed by construction: see
`gradekit._types.well_formed`)."""


def _steps(
    entries: Sequence[GraderEntry], settings: Settings, summary: SummaryBuilder
) -> tuple[list[_Step], list[list[Any]]]:
    """The steps of `entries`, and their counts in `summary` (see `SummaryBuilder.slot`)."""
    steps: list[_Step] = [
        (
            entry,
            entry.grader.grade,
            settings.timeout_of(entry),
            entry.threshold,
            entry.advisory,
            entry.weight,
            entry.fail_on_error,
            is_well_formed(entry.grader.grade)
            and entry.kind == entry.grader.kind
            and entry.name == entry.grader.name,
        )
        for entry in entries
    ]
    # Results always carry their entry's name.
    return steps, [summary.slot(entry.name) for entry in entries]


def grade_batch(  # noqa: PLR0915 - one loop, kept flat: it runs once per grade
    items: Sequence[tuple[int, Case]],
    progress: Progress,
    preset: Mapping[GradeKey, GradeResult],
    settings: Settings,
    default_policy: Policy,
) -> Progress:
    """Grade cases whose graders are all inline, in this thread, one grade after another.

    Fills `progress` (see `Progress`) and returns it. Reports are built only when
    `progress.keep`; otherwise each case is only counted (a run that keeps no report and
    streams none need not build them). `preset` holds results decided already (the timeout of
    a grade that hung in an earlier attempt at this batch); those grades are not run again.

    What a grader returned is checked by `finish`, the rules of every run; a result that needs
    no change (the usual case) is accepted here without a call, its duration set in place.
    """
    clock = time.perf_counter
    keep, done, summary = progress.keep, progress.done, progress.summary
    last_graders: tuple[GraderEntry, ...] | None = None
    # Fast graders' turns come in few distinct tallies (scores of 0 and 1): each one's verdict
    # is decided once per batch and policy.
    known_verdicts: dict[Policy, dict[Tally, tuple[bool, float, bool]]] = {}
    verdicts: dict[Tally, tuple[bool, float, bool]] = {}
    last_policy: Policy | None = None
    steps: list[_Step] = []
    slots: list[list[Any]] = []
    records: list[ResultRecord] = []
    turns: list[TurnReport] = []
    for position, case in items:
        started = now = clock()
        policy = case.policy or default_policy
        if policy is not last_policy:
            verdicts = known_verdicts.setdefault(policy, {})
            last_policy = policy
        if keep:
            turns = []
        case_passed, case_errored, case_score, ran = True, False, 0.0, 0
        ended = False
        for index, turn in enumerate(case.turns):
            if ended:
                if keep:
                    turns.append(_skipped(index))
                continue
            graders = turn.graders
            # Most turns share their graders' tuple with the turn before.
            if graders is not last_graders:
                (steps, slots), last_graders = _steps(graders, settings, summary), graders
            sample = turn.sample
            if keep:
                records = []
            # The tally of `turn_verdict`, kept as the grades come in.
            passes = fails = errored = 0
            weight_sum = weighted_sum = plain_sum = errored_weight = last = 0.0
            for number, step in enumerate(steps):
                entry, grade, seconds, threshold, advisory, weight, ends, trusted = step
                result: Any = preset.get((position, index, number)) if preset else None
                if result is None:
                    progress.mark = (now, seconds, position, index, number)
                    try:
                        value = grade(sample)
                        if trusted:
                            fine = (
                                threshold is None
                                or value.error is not None
                                or (value.score >= threshold) is value.passed
                            )
                        else:
                            passed = value.passed if type(value) is GradeResult else None
                            fine = (
                                passed is not None
                                and (passed is True or passed is False)
                                and (value.details is None or plain_json(value.details))
                                and (
                                    threshold is None
                                    or value.error is not None
                                    or (value.score >= threshold) is passed
                                )
                                and value.name == entry.name
                                and value.kind == entry.kind
                            )
                        if fine and getrefcount(value) <= FRESH_REFS:
                            # Nothing to change but the duration (`finish` would agree).
                            result = value
                            later = clock()
                            result.__dict__["duration_ms"] = (later - now) * 1000.0
                            now = later
                        else:
                            result = finish(entry, value, now)
                            now = clock()
                    except GRADER_RAISES as error:
                        if is_ctrl_c(error):
                            raise
                        result = error_result(entry, error_text(error), now)
                        now = clock()
                if keep:
                    records.append(result_record(result, advisory, weight))
                # `count_result` into the entry's slot, and the tally: inline, once per grade.
                slot = slots[number]
                if result.error is not None:
                    slot[2] += 1
                    if ends:
                        ended = True
                    if not advisory:
                        errored += 1
                        errored_weight += weight
                else:
                    score = result.score
                    slot[3] += score
                    if result.passed:
                        slot[0] += 1
                        passes += not advisory
                    else:
                        slot[1] += 1
                        fails += not advisory
                    if not advisory:
                        weight_sum += weight
                        weighted_sum += weight * score
                        plain_sum += score
                        last = score
            tally: Tally = (
                passes,
                fails,
                errored,
                weight_sum,
                weighted_sum,
                plain_sum,
                errored_weight,
                last,
            )
            verdict = verdicts.get(tally)
            if verdict is None:
                verdict = turn_outcome(policy, tally)
                if len(verdicts) < _REMEMBERED_VERDICTS:
                    verdicts[tally] = verdict
            turn_passed, turn_score, turn_errored = verdict
            if keep:
                turns.append(
                    turn_report(index, turn_passed, turn_score, tuple(records), turn_errored)
                )
            case_passed = case_passed and turn_passed
            case_errored = case_errored or turn_errored
            case_score += turn_score
            ran += 1
        if ran != 1 or ended:  # one turn that ran is the case's verdict as it is
            case_passed, case_score, case_errored = case_outcome(
                case_passed, case_errored, case_score, ran, ended=ended
            )
        if keep:
            duration = (clock() - started) * 1000.0
            report = case_report(
                case.name, case_passed, case_score, turns, case_errored, None, duration
            )
            # No report once abandoned: the runner copied `done` (a case left out is graded
            # again by the batch's next attempt).
            if progress.abandoned:
                break
            done.append((position, report))
        summary.count_case("error" if case_errored else "pass" if case_passed else "fail")
        progress.finished += 1
        if progress.abandoned:
            break
    progress.stopped.set()
    return progress
