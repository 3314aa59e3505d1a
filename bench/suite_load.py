"""Time and peak memory of `gradekit validate` on a big YAML suite (400,000 cases, about 22 MB).

Writes the suite deterministically (a suite-level `equality` grader; each case a flow
mapping with a name, an output and an expected value), runs the installed
`gradekit validate` on it in a child process, and reports the child's wall time and peak RSS
(`getrusage(RUSAGE_CHILDREN).ru_maxrss`). Large case lists belong in a `dataset:` (streamed, a
line at a time); this measures what loading them from the YAML file itself costs.

    .venv/bin/python bench/suite_load.py [--cases N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_suite(path: Path, cases: int) -> None:
    """A suite of `cases` single-turn cases, the same bytes for the same `cases`."""
    with path.open("w", encoding="utf-8") as out:
        out.write("name: big\ngraders:\n  - kind: equality\n    strip_whitespace: true\ncases:\n")
        for index in range(cases):
            answer = (index * 7919) % 100_003
            out.write(f'  - {{name: c{index:06d}, output: "{answer}", expected: "{answer}"}}\n')


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400_000)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    command = Path(sys.executable).parent / "gradekit"
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gradekit-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        suite = folder / "suite.yaml"
        write_suite(suite, args.cases)
        size_mb = suite.stat().st_size / 1e6
        import yaml

        print(f"suite: {args.cases:,} cases, {size_mb:.1f} MB; libyaml: {yaml.__with_libyaml__}")
        started = time.perf_counter()
        done = subprocess.run(
            [str(command), "validate", str(suite)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"exit {done.returncode}: {done.stdout.strip() or done.stderr.strip()[:300]}")
        print(f"wall time: {seconds:.1f} s; peak RSS: {peak_mb:.0f} MB")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
