"""The Dask driver's own CPU per case: `gradekit run -o report.json --quiet --executor dask`
on light cases (`numeric` + `contains`, the suite of `dask_vs_local.py`), against a
`LocalCluster` of `--workers` processes (one thread each) started here, so the command's
process is the driver alone: its CPU (user + system, from `wait4`) is the driver's, the
workers' is not in it. The local run of the same suite is timed the same way beside it.

Each side runs at `--cases` and at `--small` cases; the cost of a case is the difference over
the difference in cases (the start-up, `import distributed` and connecting, paid once a run,
drop out), and each round's ratio to the local run's cost is taken in the same round (the
machine's load moves both). Medians over `--rounds`. The JSON reports of both sides are
checked equal but for durations. `--src` runs another checkout's `src` (its workers too);
`--resume` gives each run a results log too (`--resume FILE`, a new one each run).

    .venv/bin/python bench/dask_driver.py [--cases N] [--small N] [--workers N] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dask_vs_local import without_durations, write_suite

HERE = Path(__file__).resolve().parent


def cpu_of(command: list[str], cwd: Path, source: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one command, its process alone (exit 1: cases fail)."""
    environment = dict(os.environ, PYTHONPATH=source)
    environment.pop("GRADEKIT_DASK_SCHEDULER", None)
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=environment, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} failed ({child.returncode}):\n{stderr}")
    return usage.ru_utime + usage.ru_stime, wall


def measure(
    args: argparse.Namespace, source: str
) -> tuple[dict[tuple[str, int], list[float]], dict[tuple[str, int], list[float]], bool]:
    """CPU and wall seconds of each run by (side, cases), and whether the reports agree."""
    from distributed import LocalCluster

    cpu: dict[tuple[str, int], list[float]] = {}
    wall: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="gradekit-bench-") as temporary:
        folders = {}
        for size in (args.cases, args.small):
            folders[size] = Path(temporary) / str(size)
            folders[size].mkdir()
            write_suite(folders[size], size)
        with LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster:
            run = [sys.executable, "-m", "gradekit", "run", "suite.yaml", "--quiet"]
            dask = ["--executor", "dask", "--scheduler", cluster.scheduler_address]
            for _ in range(args.rounds):
                for size, folder in folders.items():
                    for side, executor in (("local", []), ("dask", dask)):
                        log = folder / f"{side}.jsonl"
                        log.unlink(missing_ok=True)
                        extra = [*executor, "--resume", log.name] if args.resume else executor
                        spent, took = cpu_of([*run, "-o", f"{side}.json", *extra], folder, source)
                        cpu.setdefault((side, size), []).append(spent)
                        wall.setdefault((side, size), []).append(took)
        big = folders[args.cases]
        same = without_durations(json.loads((big / "local.json").read_text())) == (
            without_durations(json.loads((big / "dask.json").read_text()))
        )
    return cpu, wall, same


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--src", default=str(HERE.parent / "src"))
    parser.add_argument("--resume", action="store_true", help="each run writes a results log")
    args = parser.parse_args()
    source = str(Path(args.src).resolve())
    sys.path.insert(0, source)  # the cluster's workers are started from this process
    cpu, wall, same = measure(args, source)
    extra_cases = args.cases - args.small

    def per_case(side: str, index: int) -> float:
        return (cpu[side, args.cases][index] - cpu[side, args.small][index]) / extra_cases

    rounds = range(args.rounds)
    driver = statistics.median(per_case("dask", i) for i in rounds)
    local = statistics.median(per_case("local", i) for i in rounds)
    ratio = statistics.median(per_case("dask", i) / per_case("local", i) for i in rounds)
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"cases: {args.cases:,} and {args.small:,}; workers: {args.workers} (1 thread each)")
    print(f"rounds: {args.rounds}; load average at the end: {load}; cores: {os.cpu_count()}")
    print(f"source: {source}; reports equal but for durations: {same}; log: {args.resume}")
    print()
    print("| side | CPU, whole run (median) | wall (median) | CPU per case, marginal |")
    print("| --- | ---: | ---: | ---: |")
    for side, label in (("local", "local run (whole)"), ("dask", "Dask driver alone")):
        for size in (args.cases, args.small):
            spent = statistics.median(cpu[side, size])
            took = statistics.median(wall[side, size])
            figure = ""
            if size == args.cases:
                figure = f"{(driver if side == 'dask' else local) * 1e6:.1f} µs"
            print(f"| {label}, {size:,} cases | {spent:.2f} s | {took:.2f} s | {figure} |")
    print()
    print(f"driver CPU per case / local run's CPU per case (median of rounds): {ratio:.2f}x")
    print(f"one driver feeds about {1 / driver:,.0f} cases/s of CPU (at 100% of one core)")


if __name__ == "__main__":
    main()
