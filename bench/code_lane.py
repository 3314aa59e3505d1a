"""A `code` grader among the text kinds: the CPU of `gradekit run` with a third grader X.

The same single-turn cases (`e2e.py`'s dataset) graded by `equality` + `contains` + X, for X
in: `numeric` (the base), a trivial `code` grader (`def check(ctx): return True`) and
`numeric` with `timeout: 5`. Each side is `python -m gradekit run suite.yaml --no-samples -o
report.json --quiet` in a child process, the sides alternating in every round; its CPU time
(user + system, every thread) comes from `os.wait4`. Prints each side's median CPU and wall
time and the median over the rounds of its CPU divided by X = numeric's in the same round
(issue 33: the two others within about 1.2x).

    .venv/bin/python bench/code_lane.py [--cases 20000] [--rounds 5] [--src SRC]

`--src` runs the gradekit whose `src` folder this is (another worktree: the "before"); by
default this checkout's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import compile_sources
from e2e import write_dataset

HERE = Path(__file__).resolve().parent

THIRD = {
    "numeric": "  - {kind: numeric}\n",
    "code": "  - {kind: code, grader: 'lane_check:check'}\n",
    "numeric timeout 5": "  - {kind: numeric, timeout: 5}\n",
}
"""Each side's third grader entry."""

CHECK = "def check(ctx):\n    return True\n"


def write_suites(folder: Path) -> dict[str, Path]:
    """One suite per side, beside the dataset and the code grader's module."""
    (folder / "lane_check.py").write_text(CHECK, encoding="utf-8")
    suites = {}
    for index, (side, third) in enumerate(THIRD.items()):
        suite = folder / f"suite-{index}.yaml"
        suite.write_text(
            "name: lane\ngraders:\n  - {kind: equality}\n  - {kind: contains, values: ['1']}\n"
            f"{third}dataset: data.jsonl\n",
            encoding="utf-8",
        )
        suites[side] = suite
    return suites


def timed(argv: list[str], folder: Path, env: dict[str, str]) -> tuple[float, float]:
    """Run `argv` in `folder`: its wall time and its CPU time (s, every thread)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert child.stderr is not None
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {errors.decode()}")
    return seconds, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--src", type=Path, default=HERE.parent / "src")
    args = parser.parse_args(argv)
    src = args.src.resolve()
    compile_sources(src)
    folder = Path(tempfile.mkdtemp(prefix="gradekit-bench-lane-"))
    write_dataset(folder, args.cases)
    suites = write_suites(folder)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(folder)])}
    wall: dict[str, list[float]] = {side: [] for side in suites}
    cpu: dict[str, list[float]] = {side: [] for side in suites}
    for _ in range(args.rounds):
        for side, suite in suites.items():
            argv = [sys.executable, "-m", "gradekit", "run", suite.name, "--no-samples",
                    "-o", "report.json", "--quiet"]  # fmt: skip
            seconds, used = timed(argv, folder, env)
            wall[side].append(seconds)
            cpu[side].append(used)
    print(f"{args.cases:,} cases, {args.rounds} rounds, gradekit from {src}")
    base = cpu["numeric"]
    for side in suites:
        ratio = statistics.median(c / b for c, b in zip(cpu[side], base, strict=True))
        print(
            f"X = {side:18} cpu {statistics.median(cpu[side]):6.2f} s  "
            f"wall {statistics.median(wall[side]):6.2f} s  "
            f"{statistics.median(cpu[side]) / args.cases * 1e6:6.1f} us cpu a case  "
            f"cpu / X=numeric {ratio:.2f}x"
        )


if __name__ == "__main__":
    main()
