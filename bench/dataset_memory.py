"""Peak memory of `gradekit run` on a 1,000,000-line dataset (target: under 200 MB RSS).

Writes a suite whose dataset has one million single-turn cases (an equality and a numeric
grader each, both inline), runs the installed `gradekit` command on it in a child process
with `--resume results.jsonl -o report.json` (the streaming path: nothing is kept per case but
an offset), and reports the child's peak RSS (`getrusage(RUSAGE_CHILDREN).ru_maxrss`) and
wall time. Then checks the report counted every case.

    .venv/bin/python bench/dataset_memory.py [--cases N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from e2e import summary_of


def write_suite(folder: Path, cases: int) -> Path:
    """The suite file and its dataset of `cases` lines."""
    with open(folder / "data.jsonl", "w", encoding="utf-8") as out:
        for index in range(cases):
            answer = index % 997
            out.write(
                json.dumps(
                    {
                        "name": f"case-{index:07d}",
                        "input": f"What is {answer} + 0?",
                        "output": f"The answer is {answer}",
                        "expected": answer,
                    }
                )
                + "\n"
            )
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: million\n"
        "graders:\n"
        "  - {kind: numeric, extract: last}\n"
        "  - {kind: contains, values: [answer]}\n"
        "dataset: data.jsonl\n",
        encoding="utf-8",
    )
    return suite


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    command = Path(sys.executable).parent / "gradekit"
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gradekit-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        suite = write_suite(folder, args.cases)
        print(f"dataset: {args.cases:,} lines in {time.perf_counter() - started:.1f} s")
        argv = [
            str(command),
            "run",
            str(suite),
            "--resume",
            "results.jsonl",
            "-o",
            "report.json",
            "--quiet",
        ]
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=folder, stdin=subprocess.DEVNULL, check=False)
        seconds = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        summary: Any = summary_of(folder / "report.json")
        print(f"command: gradekit {' '.join(argv[1:])}")
        print(f"exit code: {done.returncode}")
        print(f"cases: {summary['cases']:,} ({summary['passed']:,} passed)")
        print(f"wall time: {seconds:.1f} s ({args.cases / seconds:,.0f} cases/s)")
        print(f"peak RSS: {peak_mb:.1f} MB")
        if summary["cases"] != args.cases or done.returncode != 0:
            raise SystemExit("the run did not grade every case")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
