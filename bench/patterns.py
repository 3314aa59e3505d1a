"""The pattern engines weighed for issue 30 ("patterns that cannot hang"): Python's `re`, the
`regex` package (the one chosen) and `google-re2`, on this machine.

For each engine: the import cost, the issue's `^(a+)+$` against 34 `a`s and a `b`, a pattern
that `regex` backtracks on (`^(a|a)*$`, 40 `a`s and a `b`) under a 1 s limit (wall and CPU
time), whether another thread runs meanwhile (the GIL released), one search of a short output,
and which of the constructs users write each compiles. `re` is not run on the backtracking
patterns (it does not return). `google-re2` is optional here: pip install google-re2.

    .venv/bin/python bench/patterns.py
"""

from __future__ import annotations

import importlib
import re
import sys
import threading
import time
import timeit
import warnings
from typing import Any

ISSUE = "a" * 34 + "b"
ALMOST = "a" * 40 + "b"
OUTPUT = "The order 1234 shipped on 2026-11-30 to the customer."
SYNTAX = [
    r"(?<=\$)\d+",
    r"(?<!a)b",
    r"(?=a)a",
    r"(a)\1",
    r"(?P<x>a)(?P=x)",
    r"(?i)abc",
    r"(?x) a b",
    r"a++",
    r"(?>a)",
    r"\Z",
    r"\p{L}",
]


def _import(name: str) -> tuple[Any, float] | None:
    started = time.perf_counter()
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return module, (time.perf_counter() - started) * 1000


def _ticks_during(work: Any) -> tuple[float, float, int]:
    """Wall and CPU seconds of `work()`, and how often a 10 ms ticker thread ran meanwhile."""
    ticks = [0]
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stop.set()
    ticker.join()
    return wall, cpu, ticks[0]


def main() -> None:
    warnings.simplefilter("ignore")
    print(f"Python {sys.version.split()[0]}")
    for name in ("regex", "re2"):
        imported = _import(name)
        if imported is None:
            print(f"{name}: not installed")
            continue
        module, ms = imported
        print(f"\n{name} {getattr(module, '__version__', '')}: import {ms:.1f} ms")
        kwargs: dict[str, Any] = {"timeout": 1.0, "concurrent": True} if name == "regex" else {}
        started = time.perf_counter()
        found = module.search(r"^(a+)+$", ISSUE, **kwargs)
        print(f"  ^(a+)+$ on 34 a's and a b: {found} in {time.perf_counter() - started:.4f} s")

        outcome = ["returned"]

        def backtrack(
            module: Any = module, kwargs: dict[str, Any] = kwargs, outcome: list[str] = outcome
        ) -> None:
            try:
                module.search(r"^(a|a)*$", ALMOST, **kwargs)
            except TimeoutError:
                outcome[0] = "TimeoutError"

        wall, cpu, ticks = _ticks_during(backtrack)
        print(
            f"  ^(a|a)*$ on 40 a's and a b: {outcome[0]} after {wall:.2f} s wall, {cpu:.2f} s "
            f"CPU; a 10 ms ticker ran {ticks} times"
        )
        compiled = module.compile(r"order (?P<id>\d+)")
        best = min(timeit.repeat(lambda c=compiled, k=kwargs: c.search(OUTPUT, **k), number=20000))
        print(f"  one search of a short output: {best / 20000 * 1e6:.2f} µs")
        refused = []
        for pattern in SYNTAX:
            try:
                module.compile(pattern)
            except Exception:  # each engine has its own error class
                refused.append(pattern)
        print(f"  refuses: {' '.join(refused) or 'none'}")
    best = min(timeit.repeat(lambda c=re.compile(r"order (?P<id>\d+)"): c.search(OUTPUT)))
    print(f"\nre: one search of a short output: {best / 1_000_000 * 1e6:.2f} µs")


if __name__ == "__main__":
    main()
