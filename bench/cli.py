"""Throughput of `gradekit run` from a dataset file to a JSON report, against a plain script.

Writes the dataset of `bench/dataset_memory.py` (single-turn cases from a JSONL file, graded by
`numeric` with `extract: last` and `contains`), then times three child processes, alternating:

- `gradekit run suite.yaml -o report.json --quiet`: load, grade, log, JSON report;
- `gradekit run suite.yaml --quiet`: the same without a report (no log either);
- a plain Python script (the baseline): reads the JSONL lines with `json.loads`, calls the
  same two graders directly (`gradekit.create`), and writes every case's results as one JSON
  file with `json.dumps`, one line a case.

Every side starts a fresh interpreter, so start-up counts on every side. Prints the median
wall time of each side and the median over the repeats of its time divided by the plain
script's time in the same repeat.

    .venv/bin/python bench/cli.py [--cases 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import paired_ratio
from dataset_memory import write_suite

PLAIN = """
import json, sys
import gradekit
from gradekit import Sample

graders = [
    gradekit.create("numeric", config={"extract": "last"}),
    gradekit.create("contains", config={"values": ["answer"]}),
]
with open("data.jsonl", encoding="utf-8") as lines, open("plain.json", "w") as out:
    out.write("[")
    for number, line in enumerate(lines):
        data = json.loads(line)
        sample = Sample(case=data["name"], input=data["input"], output=data["output"],
                        expected=data["expected"])
        results = []
        for grader in graders:
            result = grader.grade(sample)
            results.append({"name": result.name, "passed": result.passed,
                            "score": result.score, "message": result.message,
                            "details": result.details, "error": result.error})
        out.write(("\\n" if number == 0 else ",\\n") + json.dumps(
            {"name": data["name"], "passed": all(r["passed"] for r in results),
             "results": results}, ensure_ascii=False))
    out.write("\\n]\\n")
"""


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    command = str(Path(sys.executable).parent / "gradekit")
    folder = Path(tempfile.mkdtemp(prefix="gradekit-bench-cli-"))
    try:
        write_suite(folder, args.cases)
        sides = {
            "plain script": [sys.executable, "-c", PLAIN],
            "gradekit run -o report.json": [command, "run", "suite.yaml", "-o", "report.json"],
            "gradekit run (no report)": [command, "run", "suite.yaml"],
        }
        wall: dict[str, list[float]] = {label: [] for label in sides}
        for _ in range(args.repeat):
            for label, argv in sides.items():
                started = time.perf_counter()
                done = subprocess.run(
                    [*argv, "--quiet"] if argv[0] == command else argv,
                    cwd=folder,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=False,
                )
                wall[label].append(time.perf_counter() - started)
                if done.returncode != 0:
                    raise SystemExit(f"{label} failed: {done.stderr.decode()}")
        print(f"cases: {args.cases:,}, repeats: {args.repeat}")
        base = wall["plain script"]
        for label, times in wall.items():
            median = statistics.median(times)
            ratio = paired_ratio(times, base)
            print(
                f"{label:30} {median:7.3f} s  {args.cases / median:9,.0f} cases/s  "
                f"{ratio:5.2f}x plain script"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
