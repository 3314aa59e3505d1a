"""Local vs Dask: `gradekit run` on a 100,000-case dataset of cheap kinds, and what shipping
12,500 results back costs as a Python list and as one blob of bytes.

1. Writes a suite whose dataset has `--cases` single-turn cases graded by `numeric`
   (extract: last) and `contains` (both inline), and runs the installed `gradekit` command
   on it with `-o report.json --quiet`: locally, and with `--executor dask --scheduler ADDR`
   on a LocalCluster of `--workers` processes (one thread each) on 127.0.0.1, started once
   beforehand (its start-up is timed apart). The sides alternate; the figures are medians.
   The two JSON reports are checked to be equal but for durations.
2. On the same cluster: a task returns the reports of 12,500 cases (built once on the worker
   and kept there) to the driver as a list of dicts, as a list of `CaseReport`s, and as the
   bytes of their JSONL (what the executor ships), and the blob's packing on the worker plus
   unpacking on the driver is timed too.

    .venv/bin/python bench/dask_vs_local.py [--cases N] [--workers N] [--repeat N]
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
from typing import Any

RESULTS = 12_500


def write_suite(folder: Path, cases: int) -> Path:
    """The suite file and its dataset of `cases` lines."""
    with open(folder / "data.jsonl", "w", encoding="utf-8") as out:
        for index in range(cases):
            answer = index % 997
            line = {"name": f"case-{index:07d}", "output": f"The answer is {answer}"}
            line["expected"] = answer if index % 10 else answer + 1
            out.write(json.dumps(line) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: hundred-thousand\n"
        "graders:\n"
        "  - {kind: numeric, extract: last}\n"
        "  - {kind: contains, values: [answer]}\n"
        "dataset: data.jsonl\n",
        encoding="utf-8",
    )
    return suite


CPU_GRADER = """
def burn(ctx):
    # About 2 ms of pure Python per case: the kind of grader a cluster is for.
    total = 0
    for number in range(40_000):
        total += number % 7
    return total >= 0
"""


def write_cpu_suite(folder: Path, cases: int) -> Path:
    """A suite of `cases` cases graded by a CPU-bound `code` grader (not inline)."""
    (folder / "bench_burn.py").write_text(CPU_GRADER, encoding="utf-8")
    with open(folder / "cpu.jsonl", "w", encoding="utf-8") as out:
        for index in range(cases):
            out.write(json.dumps({"name": f"cpu-{index:06d}", "output": str(index)}) + "\n")
    suite = folder / "cpu.yaml"
    suite.write_text(
        "name: cpu-bound\n"
        "graders:\n"
        "  - {kind: code, grader: 'bench_burn:burn'}\n"
        "dataset: cpu.jsonl\n",
        encoding="utf-8",
    )
    return suite


def without_durations(value: Any) -> Any:
    """A report's JSON without its timings."""
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [without_durations(item) for item in value]
    return value


def timed_run(command: list[str], cwd: Path) -> float:
    """Wall seconds of one `gradekit run` (exit 1: the suite has failing cases)."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return seconds


# -- run on the workers (cloudpickle sends these functions by value) -----------------------


def _reports() -> list[Any]:
    """The reports of 12,500 cases, built once per worker and kept on it."""
    from distributed import get_worker

    from gradekit import GradeResult
    from gradekit.report.model import CaseReport, ResultRecord, TurnReport

    worker = get_worker()
    kept = getattr(worker, "_gradekit_bench_reports", None)
    if kept is None:
        kept = []
        for index in range(RESULTS):
            results = (
                ResultRecord(GradeResult("numeric", "numeric", True, 1.0, f"{index} == {index}")),
                ResultRecord(GradeResult("contains", "contains", True, 1.0, "found 'answer'")),
            )
            kept.append(
                CaseReport(f"case-{index:07d}", True, 1.0, (TurnReport(0, True, 1.0, results),))
            )
        worker._gradekit_bench_reports = kept
    return kept


def _as_dicts() -> list[dict[str, Any]]:
    return [report.to_dict() for report in _reports()]


def _as_objects() -> list[Any]:
    return _reports()


def _as_blob() -> bytes:
    from gradekit.run.dask.pack import pack_reports

    return pack_reports(_reports())


def shipping(client: Any, repeat: int) -> dict[str, float]:
    """Median seconds, on the driver, to get 12,500 results back each way."""
    from gradekit.run.dask.pack import unpack_reports

    def fetch(function: Any) -> Any:
        return client.submit(function, pure=False).result()

    for function in (_as_dicts, _as_objects, _as_blob):
        fetch(function)  # warm: the reports are built on the worker, imports done

    # The shipping alone: the worker keeps the prepared value, the task hands it over.
    def ship(value_future: Any) -> float:
        started = time.perf_counter()
        client.submit(lambda value: value, value_future, pure=False).result()
        return time.perf_counter() - started

    prepared = {
        name: client.submit(function, pure=False)
        for name, function in (("dicts", _as_dicts), ("objects", _as_objects), ("blob", _as_blob))
    }
    for future in prepared.values():
        future.result()
    times: dict[str, list[float]] = {name: [] for name in prepared}
    packed: list[float] = []
    for _ in range(repeat):
        for name, future in prepared.items():
            times[name].append(ship(future))
        started = time.perf_counter()
        unpack_reports(fetch(_as_blob))
        packed.append(time.perf_counter() - started)
    figures = {name: statistics.median(values) for name, values in times.items()}
    figures["blob, packed + shipped + unpacked"] = statistics.median(packed)
    # The CPU work of the blob, in this process (the same code runs on the worker).
    from gradekit.run.dask.pack import pack_reports

    reports = unpack_reports(fetch(_as_blob))
    packed_blob = pack_reports(reports)
    for label, work in (
        ("(packing alone, JSONL of the reports)", lambda: pack_reports(reports)),
        ("(unpacking alone, back to CaseReports)", lambda: unpack_reports(packed_blob)),
    ):
        spent = []
        for _ in range(repeat):
            started = time.perf_counter()
            work()
            spent.append(time.perf_counter() - started)
        figures[label] = statistics.median(spent)
    return figures


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpu-cases", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    command = str(Path(sys.executable).parent / "gradekit")
    with tempfile.TemporaryDirectory(prefix="gradekit-bench-") as temporary:
        folder = Path(temporary)
        suite = write_suite(folder, args.cases)
        cpu_suite = write_cpu_suite(folder, args.cpu_cases)
        started = time.perf_counter()
        cluster = LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = Client(cluster)
        startup = time.perf_counter() - started
        local_command = [command, "run", suite.name, "-o", "local.json", "--quiet"]
        dask_command = [command, "run", suite.name, "-o", "dask.json", "--quiet"]
        dask_command += ["--executor", "dask", "--scheduler", cluster.scheduler_address]
        times: dict[str, list[float]] = {key: [] for key in ("local", "dask", "cpu", "cpu-dask")}
        for _ in range(args.repeat):
            times["local"].append(timed_run(local_command, folder))
            times["dask"].append(timed_run(dask_command, folder))
            cpu = [str(cpu_suite.name) if part == suite.name else part for part in local_command]
            times["cpu"].append(timed_run(cpu, folder))
            cpu = [str(cpu_suite.name) if part == suite.name else part for part in dask_command]
            times["cpu-dask"].append(timed_run(cpu, folder))
        same = without_durations(json.loads((folder / "local.json").read_text())) == (
            without_durations(json.loads((folder / "dask.json").read_text()))
        )
        figures = shipping(client, max(5, args.repeat))
        client.close()
        cluster.close()
    load = os.getloadavg()
    median = {key: statistics.median(values) for key, values in times.items()}
    print(f"cases: {args.cases:,}; workers: {args.workers} (1 thread each); repeats: {args.repeat}")
    averages = " ".join(f"{value:.1f}" for value in load)
    print(f"load average at the end: {averages}; cores: {os.cpu_count()}")
    print(f"LocalCluster start-up: {startup:.2f} s; reports equal but for durations: {same}")
    print()
    print("| suite | side | median wall | cases/s |")
    print("| --- | --- | ---: | ---: |")
    for label, count, key in (
        (f"{args.cases:,} cases, numeric + contains", args.cases, "local"),
        ("", args.cases, "dask"),
        (f"{args.cpu_cases:,} cases, CPU-bound code grader", args.cpu_cases, "cpu"),
        ("", args.cpu_cases, "cpu-dask"),
    ):
        side = "`--executor dask`" if "dask" in key else "local"
        print(f"| {label} | {side} | {median[key]:.2f} s | {count / median[key]:,.0f} |")
    print()
    print(f"| {RESULTS:,} results back to the driver as | median |")
    print("| --- | ---: |")
    for name, seconds in figures.items():
        print(f"| {name} | {seconds * 1000:.1f} ms |")


if __name__ == "__main__":
    main()
