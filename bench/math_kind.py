"""The `math` kind's cost: the first grade of a process (math-verify and sympy imported, a warm
worker started), then a grade on a warm worker, against the same check made in this process
(what a worker adds: sending the texts and the answer).

    .venv/bin/python bench/math_kind.py [--grades N]
"""

from __future__ import annotations

import argparse
import time

import gradekit
from gradekit import Sample
from gradekit.core.context import current_run
from gradekit.process import workers

PAIRS = [
    ("The final answer is $\\boxed{\\frac{3}{4}}$.", "0.75"),
    ("so it is 0.8", "3/4"),
    ("so x = 72", "72"),
    ("(x+2)(x+5)", "x^2+7x+10"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--grades", type=int, default=400)
    count = parser.parse_args().grades
    grader = gradekit.create("math")
    started = time.perf_counter()
    grader.grade(Sample(output="0.75", expected="\\frac{3}{4}"))
    cold = time.perf_counter() - started
    samples = [Sample(output=o, expected=e) for o, e in PAIRS]
    started = time.perf_counter()
    for index in range(count):
        grader.grade(samples[index % len(samples)])
    warm = (time.perf_counter() - started) / count
    from gradekit.graders.math_check import check

    started = time.perf_counter()
    for index in range(count):
        output, expected = PAIRS[index % len(PAIRS)]
        check(output, expected, "auto", 6)
    here = (time.perf_counter() - started) / count
    workers.stop_workers(current_run())
    print(f"first grade of the process (imports, a worker started): {cold:.2f} s")
    print(f"a grade on a warm worker: {warm * 1000:.2f} ms")
    print(f"the same check in this process: {here * 1000:.2f} ms")
    print(f"what the worker adds: {(warm - here) * 1000:.2f} ms a grade")


if __name__ == "__main__":
    main()
