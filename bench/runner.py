"""Runner overhead: 100,000 samples graded by three fast kinds (equality, numeric, contains)
through `run_suite`, against calling the same graders directly in a loop.

    .venv/bin/python bench/runner.py [--samples 100000] [--repeat 5]

Both sides grade the same prebuilt samples. The runner side also builds every turn, case and
suite report, applies the verdict rules and counts the summary, as a real run does. Prints the
median of each side over the repeats and their ratio (the target is at most 2x).
"""

from __future__ import annotations

import argparse
import statistics
import time

import gradekit
from gradekit import Sample
from gradekit._model import Case, GraderEntry, Suite, Turn
from gradekit._runner import run_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    graders = [
        gradekit.create("equality", config={"strip_whitespace": True}),
        gradekit.create("numeric", config={"absolute_tolerance": 0.01}),
        gradekit.create("contains", config={"values": ["4"]}),
    ]
    entries = tuple(GraderEntry(grader=g, kind=g.kind, name=g.name) for g in graders)
    samples = [
        Sample(case=f"c{i}", output=str(i % 50), expected=str(i % 40)) for i in range(args.samples)
    ]
    cases = [Case(s.case, (Turn(s, entries),)) for s in samples]
    suite = Suite("bench", lambda: iter(cases), case_count=len(cases))

    def direct() -> None:
        for sample in samples:
            for grader in graders:
                grader.grade(sample)

    def runner() -> None:
        report = run_suite(suite)
        assert report.summary.cases == len(cases)

    def streamed() -> None:
        report = run_suite(suite, keep_cases=False)
        assert report.summary.cases == len(cases)

    sides = {"direct loop": direct, "run_suite": runner, "run_suite keep_cases=False": streamed}
    wall: dict[str, list[float]] = {label: [] for label in sides}
    cpu: dict[str, list[float]] = {label: [] for label in sides}
    for _ in range(args.repeat):
        for label, work in sides.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            work()
            wall[label].append(time.perf_counter() - started)
            cpu[label].append(time.process_time() - started_cpu)
    print(f"samples: {args.samples}, graders: equality, numeric, contains, repeats: {args.repeat}")
    base_wall, base_cpu = (
        statistics.median(wall["direct loop"]),
        statistics.median(cpu["direct loop"]),
    )
    for label in sides:
        w, c = statistics.median(wall[label]), statistics.median(cpu[label])
        ratios = f"wall {w:7.3f} s ({w / base_wall:.2f}x)   cpu {c:7.3f} s ({c / base_cpu:.2f}x)"
        print(f"{label:28} {ratios}")


if __name__ == "__main__":
    main()
