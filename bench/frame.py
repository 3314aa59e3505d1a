"""`gradekit.report.to_frame` at scale: CPU time and peak memory of a JSON report made a frame.

Writes `html_viewer.py`'s generated cases (seeded; two or three results a turn, messages,
details, samples, tags and metadata on every case) as a JSON report with `write_json`, then
times a child process that imports pandas and gradekit and calls
`gradekit.report.to_frame(path)`: its wall time, its CPU time (user and system, every thread)
and its own peak RSS (`os.wait4`). A second child only imports pandas and gradekit, so what
the frame itself costs is the difference. With `--src OTHER/src` an older tree is timed the
same way, the sides alternating in every round.

    .venv/bin/python bench/frame.py --cases 200000 --rounds 3 [--src /tmp/old/src]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from e2e import timed
from html_viewer import generate

CHILD = """
import sys, pandas, gradekit.report
if sys.argv[1] != "-":
    frame = gradekit.report.to_frame(sys.argv[1])
    print(len(frame), file=sys.stderr)
"""
"""The child: imports only with `-`, else the frame of the report at argv[1]."""


def write_report(count: int, path: Path) -> None:
    """The JSON report of `count` generated cases at `path`."""
    from gradekit.report import write_json
    from gradekit.report.model import CaseReport, SuiteReport, Summary

    summary = Summary.of(CaseReport.from_dict(case) for case in generate(count))
    report = SuiteReport("bench", (), duration_ms=1234.5, stored_summary=summary)
    encode = json.JSONEncoder(ensure_ascii=False).encode
    write_json(report, path, cases=(encode(case) for case in generate(count)))


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--src", type=Path, help="an older gradekit's src, timed beside")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gradekit-bench-frame-"))
    folder.mkdir(parents=True, exist_ok=True)
    here = str(Path(__file__).resolve().parents[1] / "src")
    sides = {"gradekit": dict(os.environ, PYTHONPATH=here)}
    if args.src:
        sides["before"] = dict(os.environ, PYTHONPATH=str(args.src))
    try:
        report = folder / "report.json"
        write_report(args.cases, report)
        print(f"report: {report.stat().st_size / 1e6:.1f} MB, {args.cases:,} cases")
        figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for round_ in range(args.rounds):
            order = list(sides.items())
            if round_ % 2:
                order.reverse()
            for side, env in order:
                for what, target in (("imports", "-"), ("to_frame", str(report))):
                    argv = [sys.executable, "-c", CHILD, target]
                    figures.setdefault((what, side), []).append(timed(argv, folder, env))
        print(f"rounds: {args.rounds}, load: {os.getloadavg()}")
        for side in sides:
            for what in ("imports", "to_frame"):
                runs = figures[(what, side)]
                wall, cpu, peak = (statistics.median(run[i] for run in runs) for i in range(3))
                print(f"{side:9s} {what:9s} {wall:7.2f} s  cpu {cpu:7.2f} s  peak {peak:8.1f} MB")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
