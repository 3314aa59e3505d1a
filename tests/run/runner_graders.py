"""Graders for the runner's tests, in a module of their own so child processes can import them."""

from __future__ import annotations

import asyncio
import ctypes
import os
import random
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar

import attrs

from gradekit import GradeResult, Sample
from gradekit.core.types import bounded
from gradekit.registry.entries import GraderEntry
from gradekit.suite.model import Case, Policy, Suite, Turn


def entry(grader: Any, **keys: Any) -> GraderEntry:
    """A suite entry for `grader` with the given common keys."""
    return GraderEntry(grader=grader, kind=grader.kind, name=grader.name, **keys)


@attrs.frozen
class Fixed:
    """Returns a fixed outcome: pass, fail or error, with `score` (or, for `wrong`, a string
    where a GradeResult belongs)."""

    kind: ClassVar[str] = "fixed"
    inline: ClassVar[bool] = True
    name: str = "fixed"
    outcome: str = "pass"
    score: float | None = None

    def grade(self, sample: Sample) -> Any:
        if self.outcome == "error":
            return GradeResult.of_error(self.kind, self.name, "ValueError: broken")
        if self.outcome == "wrong":
            return "not a result"
        passed = self.outcome == "pass"
        score = self.score if self.score is not None else float(passed)
        return GradeResult(self.kind, self.name, passed, score)


@attrs.frozen
class PooledFixed(Fixed):
    """Fixed, but not inline: graded one case at a time on the event loop and worker pool."""

    inline: ClassVar[bool] = False


@attrs.frozen
class Echo:
    """Passes when output == expected; sync, not inline (runs on the worker pool)."""

    kind: ClassVar[str] = "echo"
    name: str = "echo"
    jitter: float = 0.0

    def grade(self, sample: Sample) -> GradeResult:
        if self.jitter:
            time.sleep(random.uniform(0, self.jitter))
        ok = sample.output == sample.expected
        return GradeResult(self.kind, self.name, ok, float(ok), message=str(sample.output))


@attrs.frozen
class AsyncEcho:
    """Async twin of Echo."""

    kind: ClassVar[str] = "aecho"
    name: str = "aecho"
    jitter: float = 0.0

    async def agrade(self, sample: Sample) -> GradeResult:
        await asyncio.sleep(random.uniform(0, self.jitter))
        ok = sample.output == sample.expected
        return GradeResult(self.kind, self.name, ok, float(ok))

    def grade(self, sample: Sample) -> GradeResult:
        raise AssertionError("the runner prefers agrade")


@attrs.frozen
class Spin:
    """Hangs in pure Python: `while True`."""

    kind: ClassVar[str] = "spin"
    name: str = "spin"

    def grade(self, sample: Sample) -> GradeResult:
        while True:
            pass


@attrs.frozen
class InlineSpin(Spin):
    """Claims to be inline, then hangs like Spin."""

    kind: ClassVar[str] = "inline_spin"
    inline: ClassVar[bool] = True
    name: str = "inline_spin"


@attrs.frozen
class Sleep:
    """Hangs in `time.sleep(3600)`."""

    kind: ClassVar[str] = "sleep"
    name: str = "sleep"
    seconds: float = 3600.0

    def grade(self, sample: Sample) -> GradeResult:
        time.sleep(self.seconds)
        return GradeResult(self.kind, self.name, True, 1.0)


@attrs.frozen
class AsyncSleep:
    """Hangs in `await asyncio.sleep(3600)`."""

    kind: ClassVar[str] = "async_sleep"
    name: str = "async_sleep"
    cancelled: Any = attrs.field(factory=threading.Event, eq=False)

    async def agrade(self, sample: Sample) -> GradeResult:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return GradeResult(self.kind, self.name, True, 1.0)

    def grade(self, sample: Sample) -> GradeResult:
        raise AssertionError("the runner prefers agrade")


@attrs.frozen
class Stubborn:
    """Async, and survives cancellation: it catches every CancelledError and sleeps again
    (`forever`), or sleeps `cleanup` seconds in a `finally` (a stuck `aclose`), or returns a
    passing result once cancelled (`passes`)."""

    kind: ClassVar[str] = "stubborn"
    name: str = "stubborn"
    mode: str = "forever"

    async def agrade(self, sample: Sample) -> GradeResult:
        if self.mode == "cleanup":
            try:
                await asyncio.sleep(3600)
            finally:
                await asyncio.sleep(8)
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if self.mode == "passes":
                    return GradeResult(self.kind, self.name, True, 1.0)

    def grade(self, sample: Sample) -> GradeResult:
        raise AssertionError("the runner prefers agrade")


@attrs.frozen
class Exit:
    """Ends its process with `os._exit(1)`."""

    kind: ClassVar[str] = "exit"
    name: str = "exit"

    def grade(self, sample: Sample) -> GradeResult:
        os._exit(1)


@attrs.frozen
class Hog:
    """Allocates memory without bound."""

    kind: ClassVar[str] = "hog"
    name: str = "hog"

    def grade(self, sample: Sample) -> GradeResult:
        hoard = []
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))


@attrs.frozen
class Crash:
    """Segfaults its process."""

    kind: ClassVar[str] = "crash"
    name: str = "crash"

    def grade(self, sample: Sample) -> GradeResult:
        ctypes.string_at(0)
        raise AssertionError("unreachable")


@attrs.frozen
class Pid:
    """Passes, with its process id in details."""

    kind: ClassVar[str] = "pid"
    name: str = "pid"

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, details={"pid": os.getpid()})


class Returns:
    """Returns whatever `make()` gives (for the checks on what graders return)."""

    kind = "returns"

    def __init__(self, name: str, make: Any) -> None:
        self.name = name
        self.make = make

    def grade(self, sample: Sample) -> Any:
        return self.make()


def one_turn_suite(
    graders: Sequence[GraderEntry],
    outputs: Iterable[Any],
    *,
    name: str = "s",
    policy: Policy | None = None,
    timeout: float = 60.0,
) -> Suite:
    """A suite with one single-turn case per output, expected '0', graded by `graders`."""
    outputs = list(outputs)

    def cases() -> Iterator[Case]:
        for index, output in enumerate(outputs):
            sample = Sample(case=f"c{index}", output=output, expected="0")
            yield Case(f"c{index}", (Turn(sample, tuple(graders)),))

    policy = policy or Policy()
    return Suite(name, cases, policy=policy, timeout=timeout, case_count=len(outputs))


@attrs.frozen
class Cached:
    """Returns the same result object every time (as a grader that caches its results would);
    sleeps `seconds` first. Inline, or not when `pooled`."""

    kind: ClassVar[str] = "cached"
    name: str = "cached"
    seconds: float = 0.0
    result: GradeResult = attrs.field(
        factory=lambda: GradeResult("cached", "cached", True, 1.0, "from the cache")
    )

    def grade(self, sample: Sample) -> GradeResult:
        if self.seconds:
            time.sleep(self.seconds)
        return self.result


@attrs.frozen
class InlineCached(Cached):
    """Cached, inline: graded in the runner's batches."""

    inline: ClassVar[bool] = True


@attrs.frozen
class Where:
    """Passes, with the name of the thread that graded it in details; inline."""

    kind: ClassVar[str] = "where"
    inline: ClassVar[bool] = True
    name: str = "where"
    seconds: float = 0.0

    def grade(self, sample: Sample) -> GradeResult:
        if self.seconds:
            time.sleep(self.seconds)
        thread = threading.current_thread().name
        return GradeResult(self.kind, self.name, True, 1.0, details={"thread": thread})


@attrs.frozen
class Scored:
    """Scores the sample's output (a number in [0, 1]); passes from 0.5. Inline."""

    kind: ClassVar[str] = "scored"
    inline: ClassVar[bool] = True
    name: str = "scored"

    def grade(self, sample: Sample) -> GradeResult:
        score = float(sample.output)
        return GradeResult(self.kind, self.name, score >= 0.5, score)


@attrs.frozen
class PooledScored(Scored):
    """Scored, not inline."""

    inline: ClassVar[bool] = False


@attrs.frozen
class BoundedWhere(Where):
    """`Where`, its grade marked `bounded` (as the built-in text kinds' are): it may be graded
    in place, where nothing could abandon it."""

    @bounded
    def grade(self, sample: Sample) -> GradeResult:
        return Where.grade(self, sample)
