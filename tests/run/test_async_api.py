"""`gradekit.agrade` and `gradekit.arun_suite`: the same results as `grade` and `run_suite`,
awaited on a running event loop that keeps running meanwhile (a ticker task on the same loop
keeps ticking while a slow sync grader grades)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import attrs
from runner_graders import AsyncEcho, Echo, Sleep, Where, entry, one_turn_suite
from timings import without_durations

import gradekit
from gradekit import Sample
from gradekit.run.resume import ResultsLog

T = TypeVar("T")

SLOW = 1.0  # seconds the slow sync grader sleeps
BOUND = 0.5  # the longest gap between two ticks allowed meanwhile


async def ticking(work: Awaitable[T]) -> tuple[T, float]:
    """What `work` gives, and the longest gap between the ticks of a ticker on this loop
    (every 10 ms) while it ran."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)
    try:
        result = await work
    finally:
        done.set()
        await task
    return result, max(gaps)


def test_agrade_gives_grade_s_results_without_blocking_the_loop():
    sample = Sample(output="14.14", expected="14.1")
    graders = [
        gradekit.create("numeric", config={"absolute_tolerance": 0.1}),
        gradekit.create("contains", config={"values": ["14"]}),
        entry(Sleep(seconds=SLOW)),
        AsyncEcho(jitter=0.01),
    ]

    async def main() -> tuple[Any, float]:
        return await ticking(gradekit.agrade(sample, graders, timeout=30))

    results, gap = asyncio.run(main())

    assert gap < BOUND, gap
    expected = gradekit.grade(sample, graders, timeout=30)
    assert [attrs.evolve(r, duration_ms=None) for r in results] == [
        attrs.evolve(r, duration_ms=None) for r in expected
    ]
    assert [r.passed for r in results] == [True, True, True, False]
    assert results[2].duration_ms >= SLOW * 1000 * 0.9


def test_grade_inside_a_loop_blocks_it_and_agrade_does_not():
    """The measure the ticker takes is real: the sync `grade` holds the loop."""
    graders = [entry(Sleep(seconds=SLOW))]

    async def blocking() -> Any:
        return gradekit.grade(Sample(output="0"), graders)

    async def main() -> tuple[float, float]:
        _, held = await ticking(blocking())
        _, free = await ticking(gradekit.agrade(Sample(output="0"), graders))
        return held, free

    held, free = asyncio.run(main())

    assert held >= SLOW * 0.9
    assert free < BOUND


def test_agrade_times_out_a_hung_sync_grader():
    async def main() -> Any:
        return await gradekit.agrade(Sample(output="0"), [entry(Sleep(), timeout=0.3)])

    (result,) = asyncio.run(main())

    assert result.error == "TimeoutError: grader 'sleep' exceeded 0.3s"


def test_arun_suite_gives_run_suite_s_report_without_blocking_the_loop():
    suite = one_turn_suite([entry(Echo()), entry(Sleep(seconds=SLOW / 4))], ["0", "1", "0", "2"])
    seen: list[str] = []

    async def main() -> tuple[Any, float]:
        return await ticking(
            gradekit.arun_suite(suite, jobs=1, on_case=lambda c: seen.append(c.name))
        )

    report, gap = asyncio.run(main())

    assert gap < BOUND, gap
    assert sorted(seen) == ["c0", "c1", "c2", "c3"]
    plain = gradekit.run_suite(suite, jobs=1)
    assert without_durations(report.to_dict()["cases"]) == without_durations(
        plain.to_dict()["cases"]
    )
    assert (report.summary.passed, report.summary.failed) == (2, 2)


def test_arun_suite_raises_what_run_suite_raises():
    async def main() -> None:
        await gradekit.arun_suite(one_turn_suite([entry(Echo())], ["0"]), jobs=0)

    try:
        asyncio.run(main())
    except ValueError as error:
        assert str(error) == "jobs must be a whole number >= 1, got 0"
    else:
        raise AssertionError("no error")


def test_cancelling_arun_suite_stops_the_run_and_the_log_keeps_what_finished(tmp_path):
    suite = one_turn_suite([entry(Where(seconds=0.2))], [str(i) for i in range(50)])
    log = tmp_path / "log.jsonl"

    async def main() -> float:
        task = asyncio.create_task(gradekit.arun_suite(suite, jobs=1, resume=log))
        await asyncio.sleep(1.0)
        task.cancel()
        started = time.monotonic()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("not cancelled")
        # The run stops as by Ctrl-C: its log stops growing.
        await asyncio.sleep(1.5)
        return time.monotonic() - started

    asyncio.run(main())
    written = log.read_text().count("\n")
    time.sleep(1.0)
    assert log.read_text().count("\n") == written
    assert 1 <= written < 50
    with ResultsLog(log) as resumed:
        report = gradekit.run_suite(suite, jobs=4, resume=resumed)
    assert report.summary.passed == 50


def test_the_async_functions_take_the_same_arguments_as_the_sync_ones():
    import inspect

    for sync, awaited in (
        (gradekit.grade, gradekit.agrade),
        (gradekit.run_suite, gradekit.arun_suite),
    ):
        assert inspect.iscoroutinefunction(awaited)
        assert inspect.signature(awaited) == inspect.signature(sync), awaited
