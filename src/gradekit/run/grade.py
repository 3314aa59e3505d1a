"""The one assembly of a graded turn and a graded case, which every lane calls, and the
grading of one case on the event loop.

Every lane (the inline batch and the blocking lane, `gradekit.run.lanes`;
a case on the loop, `grade_case` here; a Dask worker, through `run_suite`) grades a turn's
entries its own way (in a thread, on the loop, in a worker process) and gets a `ResultRecord`
per grade; from the records on, a turn's report and decision come from `turn_of` and a case's
from `case_of`, nowhere else. Imports the report model, the verdict rules and `dispatch`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from gradekit.report.model import CaseReport, ResultRecord, TurnReport, bounded_record
from gradekit.report.samples import SampleForm
from gradekit.run.dispatch import run_entry
from gradekit.run.settings import Context
from gradekit.run.verdict import Decision, case_decision, tally
from gradekit.suite.model import Case, Policy, Turn

__all__ = ["case_of", "grade_case", "skipped_turn", "turn_of", "unloadable"]


def unloadable(case: Case) -> CaseReport:
    """The errored report of a case that could not be loaded."""
    return CaseReport(
        case.name,
        False,
        0.0,
        (),
        errored=True,
        error=case.error,
        tags=case.tags,
        attempt=case.attempt,
    )


def skipped_turn(index: int) -> TurnReport:
    """The report of a turn not graded because an error ended its case (`fail_on_error`)."""
    return TurnReport(index, False, 0.0, (), False, True)


async def grade_case(case: Case, policy: Policy, context: Context) -> CaseReport:
    """Grade a case's turns in order, each turn's graders concurrently.

    An error of a `fail_on_error` grader ends the case: later turns are reported skipped.
    """
    started = time.perf_counter()
    max_text = context.settings.max_text
    turns: list[TurnReport] = []
    ran: list[Decision] = []
    ended = False
    for index, turn in enumerate(case.turns):
        if ended:
            turns.append(skipped_turn(index))
            continue
        entries = turn.graders
        if len(entries) == 1:
            records = [await run_entry(entries[0], turn.sample, context)]
        else:
            records = await asyncio.gather(
                *(run_entry(entry, turn.sample, context) for entry in entries)
            )
        report, decision = turn_of(index, turn, records, policy, max_text)
        turns.append(report)
        ran.append(decision)
        ended = decision.ended
    return case_of(case, turns, ran, started, max_text)


def turn_of(
    index: int, turn: Turn, records: Sequence[ResultRecord], policy: Policy, max_text: int | None
) -> tuple[TurnReport, Decision]:
    """The report of turn `index` graded with these records, and its decision; the records'
    details bounded as the sample is (`gradekit.report.model`)."""
    decision = tally([record.result for record in records], turn.graders).turn_decision(policy)
    sample = None if max_text is None else SampleForm(turn.sample, turn.messages, max_text)
    # A record without details has nothing to bound (most of equality's, say).
    shown = tuple(
        [
            record if record.result.details is None else bounded_record(record, max_text)
            for record in records
        ]
    )
    report = TurnReport(
        index, decision.passed, decision.score, shown, decision.errored, False, sample
    )
    return report, decision


def case_of(
    case: Case,
    turns: Sequence[TurnReport],
    ran: Sequence[Decision],
    started: float,
    max_text: int | None,
) -> CaseReport:
    """The report of `case` from its turns' reports and decisions; `started` on the
    `time.perf_counter` clock."""
    passed, score, errored, _ = case_decision(ran)
    duration = (time.perf_counter() - started) * 1000.0
    metadata = None if max_text is None else SampleForm(case.metadata, None, max_text)
    return CaseReport(
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
