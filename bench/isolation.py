"""Process isolation: grades per second of warm workers, and HumanEval-like problems through
the `code` kind against `program`.

1. A trivial grader (`equality`, `isolation: process`) over N cases through `run_suite
   (jobs=2)`, with `sandbox: none` and `sandbox: bwrap`, on warm workers
   (`gradekit.process.workers`, gradekit's one path); each row is the median grades/s over the
   rounds. (The former fresh child per grade, measured against it in bench/RESULTS.md, is
   gone.)
2. HumanEval-like problems (a function and the asserts that test it, generated): the `code`
   kind (a grader that runs the text, `isolation: process`) against `program` (`python -` with
   the text on stdin), same sandbox, jobs=2; median seconds per run and the ratio code/program.

    .venv/bin/python bench/isolation.py [--quick] [--rounds 3] [--cases 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import gradekit
from gradekit import Outputs, Sample
from gradekit.process.bubblewrap import problem
from gradekit.registry.entries import GraderEntry
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn

CHECKER = '''
def check(ctx):
    """Run a HumanEval-like problem: its function and its asserts; pass when none fails."""
    scope = {}
    exec(ctx.agent_response, scope)
    return True
'''


def problem_text(index: int) -> str:
    """A HumanEval-like candidate and its tests (the same cost for both kinds)."""
    return (
        f"def add_{index}(a, b):\n    return a + b\n\n"
        f"for i in range(200):\n    assert add_{index}(i, {index}) == i + {index}\n"
    )


def suite(graders: Sequence[GraderEntry], outputs: Sequence[str]) -> Suite:
    cases = [
        Case(f"c{index}", (Turn(Sample(output=text, expected=text), tuple(graders)),))
        for index, text in enumerate(outputs)
    ]
    return Suite("bench", lambda: iter(cases))


def timed_run(graders: Sequence[GraderEntry], outputs: Sequence[str], jobs: int = 2) -> float:
    started = time.perf_counter()
    report = run_suite(suite(graders, outputs), jobs=jobs, outputs=Outputs(keep_cases=False))
    elapsed = time.perf_counter() - started
    if report.summary.passed != len(outputs):
        raise SystemExit(f"the benchmark's grades did not all pass: {report.summary}")
    return elapsed


def trivial(modes: Sequence[str], cases: int, rounds: int) -> None:
    grader = gradekit.create("equality")
    print("\n### A trivial grader (`equality`, `isolation: process`, jobs=2)\n")
    print("| sandbox | warm workers (grades/s) |")
    print("| --- | ---: |")
    for mode in modes:
        entry = GraderEntry(
            grader=grader, kind="equality", name="equality", isolation="process", sandbox=mode
        )
        timed_run([entry], ["a"] * 4)  # warm up: the fork server, the sandbox probe
        warm = [cases / timed_run([entry], ["a"] * cases) for _ in range(rounds)]
        print(f"| {mode} | {statistics.median(warm):,.0f} |", flush=True)


def humaneval(modes: Sequence[str], problems: int, rounds: int) -> None:
    print(f"\n### {problems} HumanEval-like problems, `code` kind vs `program` (jobs=2)\n")
    print("| sandbox | program (s) | code, isolation: process (s) | code / program |")
    print("| --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "bench_checker.py").write_text(CHECKER)
        sys.path.insert(0, folder)
        outputs = [problem_text(index) for index in range(problems)]
        for mode in modes:
            program = gradekit.create(
                "program", config={"command": [sys.executable, "-"], "sandbox": mode}
            )
            code = gradekit.create("code", config={"grader": "bench_checker:check"})
            sides = {
                "program": GraderEntry(grader=program, kind="program", name="program"),
                "code": GraderEntry(
                    grader=code, kind="code", name="check", isolation="process", sandbox=mode
                ),
            }
            for entry in sides.values():
                timed_run([entry], outputs[:4])
            times: dict[str, list[float]] = {"program": [], "code": []}
            ratios = []
            for _ in range(rounds):
                pair = {label: timed_run([entry], outputs) for label, entry in sides.items()}
                for label, seconds in pair.items():
                    times[label].append(seconds)
                ratios.append(pair["code"] / pair["program"])
            print(
                f"| {mode} | {statistics.median(times['program']):.2f} "
                f"| {statistics.median(times['code']):.2f} | {statistics.median(ratios):.2f} |",
                flush=True,
            )
        sys.path.remove(folder)


def main(argv: Sequence[str] | None = None) -> None:
    """Print the tables (markdown) of both measurements."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer cases and rounds")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--cases", type=int, default=None, help="cases per warm round")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    cases = args.cases or (300 if args.quick else 3000)
    modes = ["none"] if problem() is not None else ["none", "bwrap"]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, cpus: {os.cpu_count()}")
    trivial(modes, cases, rounds=rounds)
    humaneval(modes, 40 if args.quick else 200, rounds)


if __name__ == "__main__":
    main()
