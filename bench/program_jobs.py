"""`program` graders by jobs: gradekit against a plain thread pool of `subprocess.run`.

200 cases (`--cases`), each a small Python command reading the sample's output on stdin and
printing it upper-cased; a case passes when stdout holds the expected text. Sides, alternated
round by round so that they see the same machine load:

- `gradekit`: `run_suite(jobs=J)` (what `gradekit run --jobs J` does) with one `program`
  grader per case, `sandbox: none` (and `sandbox: bwrap` in its own row, against the same
  plain pool), default options (workspace copy, scrubbed environment, limits, output capture);
- `former`: the `sandbox: none` side as gradekit was before (limits by `setrlimit` in a
  `preexec_fn`, the scratch root removed before the grade returns), for comparison;
- `plain pool`: `concurrent.futures.ThreadPoolExecutor(J)` mapping `subprocess.run(argv,
  input=..., capture_output=True)` and the same check.

With `--before SRC` (a gradekit source tree, such as `git archive main src | tar -x -C /tmp/b`
and `/tmp/b/src`; repeat it for several), one more side each: that gradekit's `sandbox: none`,
graded in a child interpreter of its own importing it from SRC, in the same turns as the
others. (The parent process also runs the other sides, their background removals included:
give this tree as a `--before` too to compare like with like.)

Within a round the sides take turns every 20 cases (`--chunk`; each turn is one run of the
side): the load of a shared machine drifts within seconds. Prints the median seconds of each
side for J = 1 and 2, the median over the rounds of gradekit / plain (target at most 1.1),
and jobs 1 / jobs 2 for each side (target at least 1.8 on 2 cores).

    .venv/bin/python bench/program_jobs.py [--quick] [--rounds 5] [--cases 200] [--chunk 20]
        [--before SRC]...
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import gradekit
from gradekit import Outputs, Sample
from gradekit.process.bubblewrap import problem
from gradekit.registry.entries import GraderEntry
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn

SCRIPT = "import sys; print(sys.stdin.read().upper())"
CHUNK = 20
ARGV = [sys.executable, "-c", SCRIPT]


def texts(count: int) -> list[str]:
    return [f"answer number {index}" for index in range(count)]


@contextlib.contextmanager
def former_path() -> Iterator[None]:
    """gradekit as it was: limits set by `setrlimit` in a `preexec_fn`, scratch roots removed
    before the grade returns."""
    from gradekit.core.scratch import remove_tree
    from gradekit.process import commands as process
    from gradekit.process import scratch

    prefix, close = process.limit_prefix, scratch.Sandbox.close
    process.limit_prefix = lambda memory, cpu: None  # type: ignore[assignment]
    scratch.Sandbox.close = lambda self: remove_tree(self.root)  # type: ignore[method-assign]
    try:
        yield
    finally:
        process.limit_prefix = prefix  # type: ignore[assignment]
        scratch.Sandbox.close = close  # type: ignore[method-assign]


def gradekit_side(outputs: Sequence[str], jobs: int, sandbox: str) -> float:
    if sandbox == "former":
        with former_path():
            return gradekit_side(outputs, jobs, "none")
    cases = []
    for index, text in enumerate(outputs):
        grader = gradekit.create(
            "program",
            config={"command": ARGV, "expected_output": text.upper(), "sandbox": sandbox},
        )
        entry = GraderEntry(grader=grader, kind="program", name="program")
        cases.append(Case(f"c{index}", (Turn(Sample(output=text), (entry,)),)))
    started = time.perf_counter()
    report = run_suite(
        Suite("bench", lambda: iter(cases)), jobs=jobs, outputs=Outputs(keep_cases=False)
    )
    elapsed = time.perf_counter() - started
    if report.summary.passed != len(outputs):
        raise SystemExit(f"gradekit's grades did not all pass: {report.summary}")
    return elapsed


def plain_side(outputs: Sequence[str], jobs: int) -> float:
    def one(text: str) -> bool:
        done = subprocess.run(ARGV, input=text, capture_output=True, text=True, check=False)
        return done.returncode == 0 and text.upper() in done.stdout

    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        passed = sum(pool.map(one, outputs))
    elapsed = time.perf_counter() - started
    if passed != len(outputs):
        raise SystemExit("the plain pool's commands did not all pass")
    return elapsed


class Before:
    """The `sandbox: none` side of another gradekit, graded in a child interpreter that
    imports it from `source` (this script run with `--serve`)."""

    def __init__(self, source: str, count: int) -> None:
        env = {**os.environ, "PYTHONPATH": source}
        self.child = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--cases", str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        where = self.ask("where")
        if not where.startswith(os.path.abspath(source)):
            raise SystemExit(f"the --before side imported gradekit from {where}, not {source}")

    def ask(self, line: str) -> str:
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write(line + "\n")
        self.child.stdin.flush()
        return self.child.stdout.readline().strip()

    def side(self, start: int, count: int, jobs: int) -> float:
        return float(self.ask(f"{jobs} {start} {count}"))


def serve(count: int) -> None:
    """The child of `Before`: `where` prints gradekit's folder; `JOBS START COUNT` grades
    those cases and prints the seconds."""
    outputs = texts(count)
    gradekit_side(outputs[:4], 2, "none")  # warm up
    for line in sys.stdin:
        if line.strip() == "where":
            print(os.path.dirname(os.path.abspath(gradekit.__file__)), flush=True)
            continue
        jobs, start, size = map(int, line.split())
        print(gradekit_side(outputs[start : start + size], jobs, "none"), flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table (markdown)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer cases and rounds")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--cases", type=int, default=None)
    parser.add_argument(
        "--chunk", type=int, default=CHUNK, help=f"cases a side grades per turn (default {CHUNK})"
    )
    parser.add_argument(
        "--before",
        action="append",
        default=[],
        help="another gradekit's src folder, compared in the runs (may be repeated)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 5)
    count = args.cases or (40 if args.quick else 200)
    if args.serve:
        serve(count)
        return
    outputs = texts(count)
    befores = {source: Before(source, count) for source in args.before}
    sandboxes = ["none"] if problem() is not None else ["none", "bwrap"]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, cpus: {os.cpu_count()}")
    gradekit_side(outputs[:4], 2, "none")  # warm up: imports, caches
    sides = [("plain pool", None)] + [(f"gradekit, sandbox: {s}", s) for s in sandboxes]
    sides.append(("gradekit, sandbox: none, former limits and removal", "former"))
    sides += [(f"gradekit from {source}, sandbox: none", source) for source in befores]
    times: dict[tuple[str, int], list[float]] = {}
    # Each round grades every case once per side and jobs, in chunks of CHUNK cases with the
    # sides taking turns chunk by chunk: on a shared machine the load drifts within seconds.
    starts = range(0, len(outputs), args.chunk)
    for _ in range(rounds):
        spent: dict[tuple[str, int], float] = {}
        for start in starts:
            chunk = outputs[start : start + args.chunk]
            for jobs in (1, 2):
                for label, sandbox in sides:
                    if sandbox is None:
                        seconds = plain_side(chunk, jobs)
                    elif sandbox in befores:
                        seconds = befores[sandbox].side(start, len(chunk), jobs)
                    else:
                        seconds = gradekit_side(chunk, jobs, sandbox)
                    spent[(label, jobs)] = spent.get((label, jobs), 0.0) + seconds
        for key, seconds in spent.items():
            times.setdefault(key, []).append(seconds)
    print(f"\n### {len(outputs)} `program` cases, medians of {rounds} rounds\n")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| side | jobs 1 (s) | jobs 2 (s) | jobs 1 / jobs 2 | vs plain pool, jobs 1 | jobs 2 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    plain = {jobs: times[("plain pool", jobs)] for jobs in (1, 2)}
    for label, _ in sides:
        one, two = times[(label, 1)], times[(label, 2)]
        speedup = statistics.median(a / b for a, b in zip(one, two, strict=True))
        versus = [
            statistics.median(a / b for a, b in zip(times[(label, j)], plain[j], strict=True))
            for j in (1, 2)
        ]
        print(
            f"| {label} | {statistics.median(one):.2f} | {statistics.median(two):.2f} "
            f"| {speedup:.2f} | {versus[0]:.2f} | {versus[1]:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
