"""Grading one case on the event loop: its turns in order, each turn's graders concurrently."""

from __future__ import annotations

import asyncio
import time

from gradekit.report.model import CaseReport, TurnReport
from gradekit.report.samples import SampleForm
from gradekit.run.dispatch import run_entry
from gradekit.run.settings import Context
from gradekit.run.verdict import Decision, case_decision, tally
from gradekit.suite.model import Case, Policy

__all__ = ["grade_case", "skipped_turn", "unloadable"]


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
        decision = tally([record.result for record in records], entries).turn_decision(policy)
        ran.append(decision)
        sample = None if max_text is None else SampleForm(turn.sample, turn.messages, max_text)
        turns.append(
            TurnReport(
                index,
                decision.passed,
                decision.score,
                tuple(records),
                decision.errored,
                False,
                sample,
            )
        )
        ended = decision.ended
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
