"""What the supervisor of a run stuck in C code costs: `gradekit run` on two trees, side by side.

A suite whose graders may hold the GIL in a thread (a `code` grader) runs under a supervising
process (`gradekit.cli.supervise`): a fork once the suite is loaded, and each finished case
written to a scratch file as it ends. A suite of gradekit's own kinds runs as before. Each
side is `python -m gradekit run SUITE -o report.json --quiet` in a child, the trees (`--src`,
the "before", and this checkout) alternating in every round; its CPU time (user + system,
every thread, the supervised run's own process included: `os.wait4` counts the children a
process waited for) comes from `os.wait4`. Prints, per suite and tree, the median CPU and
wall time, and the median over the rounds of after / before.

The suites: `start code` and `start builtin` (one case: the start-up, the suite loaded, the
report written), `code` and `builtin` (`--cases` single-turn cases of `e2e.py`'s dataset,
graded by a trivial `code` grader, `def check(ctx): return True`, or by `numeric`).

    .venv/bin/python bench/supervisor.py --before /tmp/sv-before/src [--cases 20000] [--rounds 5]
        [--start-rounds 11] [--suites 'start code,start builtin,code,builtin']
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import compile_sources
from code_lane import timed
from e2e import write_dataset

HERE = Path(__file__).resolve().parent

CHECK = "def check(ctx):\n    return True\n"

SUITES = {
    "start code": "cases:\n  - {name: a, output: '1', graders: [{kind: code, grader: "
    "'sv_check:check'}]}\n",
    "start builtin": "cases:\n  - {name: a, output: '1', expected: 1, graders: "
    "[{kind: numeric}]}\n",
    "code": "graders:\n  - {kind: code, grader: 'sv_check:check'}\ndataset: data.jsonl\n",
    "builtin": "graders:\n  - {kind: numeric}\ndataset: data.jsonl\n",
}
"""Each suite's text after its name."""


def write_suites(folder: Path) -> dict[str, Path]:
    """One suite file per entry of SUITES, beside the dataset and the code grader's module."""
    (folder / "sv_check.py").write_text(CHECK, encoding="utf-8")
    paths = {}
    for index, (side, text) in enumerate(SUITES.items()):
        path = folder / f"suite-{index}.yaml"
        path.write_text(f"name: sv\n{text}", encoding="utf-8")
        paths[side] = path
    return paths


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the other tree's src")
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--start-rounds", type=int, default=11)
    parser.add_argument("--suites", default=",".join(SUITES), help="which, comma-separated")
    args = parser.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": (HERE.parent / "src").resolve()}
    for src in trees.values():
        compile_sources(src)
    folder = Path(tempfile.mkdtemp(prefix="gradekit-bench-sv-"))
    write_dataset(folder, args.cases)
    suites = write_suites(folder)
    print(f"{args.cases:,} cases; gradekit before {trees['before']}, after {trees['after']}")
    for side in args.suites.split(","):
        suite = suites[side]
        rounds = args.start_rounds if side.startswith("start") else args.rounds
        wall: dict[str, list[float]] = {tree: [] for tree in trees}
        cpu: dict[str, list[float]] = {tree: [] for tree in trees}
        for _ in range(rounds):
            for tree, src in trees.items():
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(folder)])}
                argv = [sys.executable, "-m", "gradekit", "run", suite.name,
                        "-o", "report.json", "--quiet"]  # fmt: skip
                seconds, used = timed(argv, folder, env)
                wall[tree].append(seconds)
                cpu[tree].append(used)
        ratio = statistics.median(a / b for a, b in zip(cpu["after"], cpu["before"], strict=True))
        cells = "  ".join(
            f"{tree}: cpu {statistics.median(cpu[tree]) * 1000:7.0f} ms "
            f"wall {statistics.median(wall[tree]) * 1000:7.0f} ms"
            for tree in trees
        )
        print(f"{side:14} ({rounds} rounds)  {cells}  cpu after/before {ratio:.3f}x")


if __name__ == "__main__":
    main()
