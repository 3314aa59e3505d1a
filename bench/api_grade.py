"""`gradekit.grade` per call against calling the grader itself, and the old checkout beside it.

    .venv/bin/python bench/api_grade.py [--calls 20000] [--rounds 5]

Three sides, each a loop of `--calls` calls on one sample (`output='42', expected='42'`),
CPU time (`time.process_time`, garbage collector off), alternating in every round:

- `grader.grade(sample)`: the `numeric` grader called directly (the floor);
- `gradekit.grade(sample, [numeric])`: the API, which grades bounded kinds in place;
- `gradekit.grade(sample, [code])`: a trivial `code` grader (`builtins:bool`, true), graded on
  a pool thread and waited for (a grade that may hang must be abandonable at its timeout).

Prints the median microseconds a call of each side and each side's median paired ratio to the
floor (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import time

from _timing import median, paired_ratio, timed

import gradekit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sample = gradekit.Sample(output="42", expected="42")
    numeric = gradekit.create("numeric")
    code = gradekit.create("code", "code", {"grader": "builtins:bool"})  # bool(ctx): True
    calls = args.calls
    sides = {
        "numeric.grade(sample)": lambda: [numeric.grade(sample) for _ in range(calls)],
        "gradekit.grade(sample, [numeric])": lambda: [
            gradekit.grade(sample, [numeric]) for _ in range(calls)
        ],
        "gradekit.grade(sample, [code])": lambda: [
            gradekit.grade(sample, [code]) for _ in range(calls // 20)
        ],
    }
    counts = {name: calls // 20 if "code" in name else calls for name in sides}
    for loop in sides.values():  # warm
        loop()
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, loop in sides.items():
            times[name].append(timed(loop, time.process_time) / counts[name] * 1e6)
    floor = times["numeric.grade(sample)"]
    print(f"{calls} calls ({calls // 20} for the code grader), {args.rounds} rounds, CPU time")
    print(f"{'side':38} {'µs a call':>10} {'ratio to the floor':>19}")
    for name, values in times.items():
        print(f"{name:38} {median(values):10.2f} {paired_ratio(values, floor):18.1f}x")


if __name__ == "__main__":
    main()
