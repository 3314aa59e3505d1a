"""Timing helpers shared by the benchmarks: medians, paired ratios, timed loops, the machine.

Standard library only: the peer benchmarks' child scripts import this module too, from the
peers' own virtual environments (they put this folder first on `sys.path`).
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def median(values: Iterable[float]) -> float:
    """The median of `values` (at least one)."""
    return statistics.median(list(values))


def paired_ratio(side: Sequence[float], base: Sequence[float]) -> float:
    """The median over the pairs of `side[i] / base[i]`, each pair timed in the same round.

    On a shared machine a round that another job slows down slows both sides of its pair, so
    the ratio of a pair is steadier than the ratio of the two medians.
    """
    if len(side) != len(base) or not side:
        raise ValueError(f"need pairs: {len(side)} side times against {len(base)} base times")
    return statistics.median(s / b for s, b in zip(side, base, strict=True))


def timed(loop: Callable[[], Any], clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds one call of `loop` takes, with the garbage collector off (as `timeit` does).

    `clock` is wall time by default; `time.process_time` counts only this process's CPU time,
    which other jobs on a shared machine disturb less.
    """
    gc.collect()
    gc.disable()
    try:
        started = clock()
        loop()
        return clock() - started
    finally:
        gc.enable()


def call_loop(call: Callable[..., Any], arguments: Sequence[tuple[Any, ...]]) -> Callable[[], Any]:
    """A loop calling `call(*args)` for each args, dropping each result as the next comes."""

    def loop() -> deque[Any]:
        sink: deque[Any] = deque(maxlen=1)
        append = sink.append
        for args in arguments:
            append(call(*args))
        return sink

    return loop


def per_call_us(loop: Callable[[], Any], calls: int, repeat: int) -> list[float]:
    """CPU microseconds per call of `loop` (which makes `calls` calls), one per repeat."""
    loop()  # warm up: caches, lazy imports, compiled patterns
    return [timed(loop, time.process_time) / calls * 1e6 for _ in range(repeat)]


def against_plain(
    loop: Callable[[], Any], plain: Callable[[], Any], calls: int, repeat: int
) -> tuple[list[float], list[float]]:
    """CPU µs per call of `loop` and of `plain`, timed one after the other in each repeat."""
    loop()  # warm up both
    plain()
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(repeat):
        ours.append(timed(loop, time.process_time) / calls * 1e6)
        theirs.append(timed(plain, time.process_time) / calls * 1e6)
    return ours, theirs


def alternate(sides: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Run each side once per round, in an order that rotates every round; their figures.

    Each side is a function returning one figure (seconds, µs): figure i of every side comes
    from round i, so `paired_ratio` can pair them.
    """
    figures: dict[str, list[float]] = {label: [] for label in sides}
    labels = list(sides)
    for number in range(rounds):
        shift = number % len(labels)
        for label in labels[shift:] + labels[:shift]:
            figures[label].append(sides[label]())
    return figures


def cpu_model() -> str:
    """The processor's model name, as /proc/cpuinfo gives it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as `uptime` shows them."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def machine() -> str:
    """One line naming the machine, the interpreter and the load, for a benchmark's header."""
    return (
        f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}, load average {load_average()}"
    )


def compile_sources(*folders: str | os.PathLike[str]) -> None:
    """Write the bytecode of every module under `folders`, as an installed package has it.

    An editable install compiles its modules on first import and caches them, unless
    `PYTHONDONTWRITEBYTECODE` is set (as on some CI machines): then every child the benchmark
    starts would compile gradekit again (about 0.1 s of CPU), which a user's run does not.
    `compileall` writes the caches whatever that variable says.
    """
    import compileall

    for folder in folders:
        compileall.compile_dir(os.fspath(folder), quiet=1)
