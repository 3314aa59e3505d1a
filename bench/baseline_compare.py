"""A run against its baseline at scale: `run --baseline`, `compare` and `--rerun-failed`.

Writes `bench/e2e.py`'s dataset and a suite of equality, contains and regex, makes the
baseline (`gradekit run suite.yaml -o base.json`), then times child processes, the sides
alternating in every round, each command after the same command of the other side:

- `run`: `gradekit run suite.yaml -o new.json --quiet`, the run alone;
- `run --baseline`: the same with `--baseline base.json` (every case marked against it);
- `compare`: `gradekit compare base.json new.json`;
- `rerun-failed`: `gradekit run suite.yaml --rerun-failed base.json -o rerun.json --quiet`.

With `--before SRC` an older gradekit (its `src` folder, run with it first on PYTHONPATH) is
timed the same way beside this one. Prints each command's median wall time, CPU time (user
and system) and peak RSS (the child's own, from `os.wait4`), and, with `--before`, the median
over the rounds of this gradekit's time over the older one's.

    .venv/bin/python bench/baseline_compare.py [--cases 100000] [--rounds 3] [--before OLD/src]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import compile_sources
from e2e import timed, write_dataset, write_suite

COMMANDS = {
    "run": ["run", "{suite}", "-o", "new.json", "--quiet"],
    "run --baseline": ["run", "{suite}", "-o", "new.json", "--quiet", "--baseline", "base.json"],
    "compare": ["compare", "base.json", "new.json"],
    "rerun-failed": ["run", "{suite}", "--rerun-failed", "base.json", "-o", "rerun.json", "-q"],
}
"""What is timed, as `gradekit` arguments (`{suite}`: the suite's file name)."""


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, metavar="SRC", help="an older gradekit's src")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gradekit-bench-baseline-"))
    folder.mkdir(parents=True, exist_ok=True)
    module = [sys.executable, "-m", "gradekit"]
    sides = {"gradekit": os.environ.copy()}
    if args.before:
        sides["before"] = dict(os.environ, PYTHONPATH=str(args.before))
    try:
        write_dataset(folder, args.cases)
        suite = write_suite(folder, ("equality", "contains", "regex")).name
        spec = importlib.util.find_spec("gradekit")
        assert spec is not None and spec.submodule_search_locations
        compile_sources(*spec.submodule_search_locations, *([args.before] if args.before else []))
        timed([*module, "run", suite, "-o", "base.json", "--quiet"], folder)
        size = (folder / "base.json").stat().st_size / 1e6
        print(f"baseline: {size:.1f} MB, {args.cases:,} cases")
        figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for round_ in range(args.rounds):
            for command, words in COMMANDS.items():
                argv = [*module, *(word.format(suite=suite) for word in words)]
                order = list(sides.items())
                if round_ % 2:
                    order.reverse()
                for side, env in order:
                    figures.setdefault((command, side), []).append(timed(argv, folder, env))
        print(f"rounds: {args.rounds}, load: {os.getloadavg()}")
        for command in COMMANDS:
            for side in sides:
                runs = figures[(command, side)]
                wall, cpu, peak = (statistics.median(run[i] for run in runs) for i in range(3))
                print(
                    f"{command:16s} {side:9s} {wall:7.2f} s  cpu {cpu:7.2f} s  peak {peak:8.1f} MB"
                )
            if args.before:
                ratio = statistics.median(
                    new[1] / old[1]
                    for new, old in zip(
                        figures[(command, "gradekit")], figures[(command, "before")], strict=True
                    )
                )
                print(f"{command:16s} gradekit / before: {ratio:.2f}x cpu")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
