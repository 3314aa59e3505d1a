"""What the bubblewrap sandbox costs per command: `program` graders with and without it.

Times N grades of each command through the `program` kind (`grader.grade(sample)`: the
workspace copy, the scrubbed environment, the process start, the capture), once with
`sandbox: none` and once with `sandbox: bwrap`, alternating grade by grade so that both sides
see the same machine load. Commands: `true`, and a small Python script (the interpreter
running this benchmark, printing the sum of a range). Prints the median wall time per grade of
each side and the median, over the pairs, of the sandboxed grade's time divided by the bare
one's. Also times one process-isolated grade (`isolation: process`, `equality`) each way.

    .venv/bin/python bench/sandbox.py [--runs 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gradekit
from gradekit import Sample
from gradekit.process.bubblewrap import problem
from gradekit.registry.entries import GraderEntry
from gradekit.suite.model import Case, Suite, Turn

SCRIPT = "print(sum(range(1000)))"


def time_grade(grader: object, sample: Sample) -> float:
    started = time.perf_counter()
    result = grader.grade(sample)  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - started
    if result.error is not None or not result.passed:
        raise SystemExit(f"the benchmark's command failed: {result.error or result.message}")
    return elapsed


def commands(runs: int, workspace: Path) -> None:
    sample = Sample(workspace=str(workspace))
    for label, argv in (("true", ["true"]), ("python script", [sys.executable, "-c", SCRIPT])):
        graders = {
            mode: gradekit.create("program", config={"command": argv, "sandbox": mode})
            for mode in ("none", "bwrap")
        }
        for grader in graders.values():  # warm up: caches, the sandbox probe
            time_grade(grader, sample)
        times: dict[str, list[float]] = {"none": [], "bwrap": []}
        ratios = []
        for _ in range(runs):
            bare = time_grade(graders["none"], sample)
            jailed = time_grade(graders["bwrap"], sample)
            times["none"].append(bare)
            times["bwrap"].append(jailed)
            ratios.append(jailed / bare)
        report(f"program: {label}", times, ratios)


def process_isolation(runs: int) -> None:
    grader = gradekit.create("equality")
    times: dict[str, list[float]] = {"none": [], "bwrap": []}
    ratios = []
    for index in range(runs + 1):
        pair = {}
        for mode in ("none", "bwrap"):
            entry = GraderEntry(
                grader=grader, kind="equality", name="equality", isolation="process", sandbox=mode
            )
            case = Case("c", (Turn(Sample(output="a", expected="a"), (entry,)),))
            started = time.perf_counter()
            report_ = gradekit.run_suite(Suite("s", lambda case=case: iter([case])), jobs=1)
            pair[mode] = time.perf_counter() - started
            if not report_.passed:
                raise SystemExit("the process-isolated grade failed")
        if index == 0:
            continue  # warm up: the forkserver's start
        times["none"].append(pair["none"])
        times["bwrap"].append(pair["bwrap"])
        ratios.append(pair["bwrap"] / pair["none"])
    report("isolation: process (equality, one-case run_suite)", times, ratios)


def report(label: str, times: dict[str, list[float]], ratios: list[float]) -> None:
    bare = statistics.median(times["none"]) * 1000
    jailed = statistics.median(times["bwrap"]) * 1000
    ratio = statistics.median(ratios)
    print(f"| {label} | {bare:.1f} ms | {jailed:.1f} ms | +{jailed - bare:.1f} ms | {ratio:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="grades per side and command")
    args = parser.parse_args()
    cause = problem()
    if cause is not None:
        raise SystemExit(f"bubblewrap cannot run here: {cause}")
    print("| grade | sandbox: none | sandbox: bwrap | difference | median ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "solution.py").write_text("print(42)\n")
        commands(args.runs, workspace)
    process_isolation(max(args.runs // 5, 5))


if __name__ == "__main__":
    main()
