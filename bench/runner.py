"""Runner overhead: 100,000 samples graded by three fast kinds (equality, numeric, contains)
through `run_suite`, against calling the same graders directly in a loop.

    .venv/bin/python bench/runner.py [--samples 100000] [--repeat 5]

Every side grades the same prebuilt samples. Two direct loops are the baselines: one drops
each result (`direct loop`), one keeps every sample's results in a list (`direct loop, kept`:
allocation and the garbage collector walking what is kept cost as much as the grades). Both
runner sides check what every grader returned, apply the verdict rules per turn and case and
count the summary, as a real run does. `run_suite` also builds and keeps every result record,
turn and case report, so it compares with the keeping loop; `run_suite(keep_cases=False)`
without `on_case` keeps only the summary (the runner builds no report nobody will see), so it
compares with the dropping loop.

Prints the median time of each side over the repeats and, for each side, the median over the
repeats of its time divided by its baseline's in the same repeat, against its fair baseline
and against the dropping loop (the target is at most 2x).
"""

from __future__ import annotations

import argparse
import statistics
import time

from _timing import paired_ratio

import gradekit
from gradekit import Outputs, Sample
from gradekit.registry.entries import GraderEntry
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn


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

    def direct_kept() -> None:
        kept = []
        for sample in samples:
            kept.append([grader.grade(sample) for grader in graders])
        assert len(kept) == len(samples)

    def runner() -> None:
        report = run_suite(suite)
        assert report.summary.cases == len(cases)

    def streamed() -> None:
        report = run_suite(suite, outputs=Outputs(keep_cases=False))
        assert report.summary.cases == len(cases)

    sides = {
        "direct loop": direct,
        "direct loop, kept": direct_kept,
        "run_suite": runner,
        "run_suite keep_cases=False": streamed,
    }
    # Which baseline each side is fairly compared with.
    baseline = {
        "direct loop": "direct loop",
        "direct loop, kept": "direct loop",
        "run_suite": "direct loop, kept",
        "run_suite keep_cases=False": "direct loop",
    }
    wall: dict[str, list[float]] = {label: [] for label in sides}
    cpu: dict[str, list[float]] = {label: [] for label in sides}
    for _ in range(args.repeat):
        for label, work in sides.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            work()
            wall[label].append(time.perf_counter() - started)
            cpu[label].append(time.process_time() - started_cpu)
    print(f"samples: {args.samples}, graders: equality, numeric, contains, repeats: {args.repeat}")
    print("ratios: median over the repeats of (side / baseline) timed in the same repeat")
    direct_wall = wall["direct loop"]
    for label in sides:
        w, c = statistics.median(wall[label]), statistics.median(cpu[label])
        base = baseline[label]
        fair = paired_ratio(wall[label], wall[base])
        plain = paired_ratio(wall[label], direct_wall)
        print(
            f"{label:28} wall {w:7.3f} s   cpu {c:7.3f} s   "
            f"{fair:5.2f}x {base:18}   {plain:5.2f}x direct loop"
        )


if __name__ == "__main__":
    main()
