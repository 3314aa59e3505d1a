"""What one `program` command costs, part by part, against a bare `subprocess.run`.

The same small Python command as `program_jobs.py` (read stdin, print it upper-cased), run
one at a time in this process by sides that each add one of the things a `program` grade
does, taking turns in every round so that they see the same machine:

- `plain`: `subprocess.run(argv, input=..., capture_output=True)`;
- `prlimit`: the same behind util-linux's `prlimit` (no core dumps, the 2 GiB data limit),
  with the scrubbed environment, the scratch folder as cwd and a new session: what the
  limits' extra exec costs where gradekit's launcher cannot be built;
- `launcher`: the same behind gradekit's own launcher (`process/limits.py`), the
  prefix that gradekit uses where a C compiler is installed;
- `process.run`: gradekit's runner of one command (`process/commands.py`: the capture
  loop with its output caps, the pidfd, the group killed when the leader exits), in a scratch
  folder made once;
- `run + fresh root`: the same in a fresh scratch root per command (`home`, `tmp` and `work`
  made, and removed on the remover thread);
- `run + spare root`: the same in a scratch root taken from the spare ones and given back
  (`process/scratch.py`), as a grade without a workspace has it;
- `grade`: a whole `program` grade (`grade_blocking`, `sandbox: none`): the above, the
  checks, the details and the result;
- `run_suite`: the round's commands as the cases of one `run_suite(jobs=1)` (what `gradekit
  run` does with them): the grades, and the runner's hand-offs, counting and report around
  them.

Prints, per side, the median over the rounds of the wall time per command, the parent's CPU
time (user + system, every thread) and the children's, and each side's wall time over
`plain`'s in the same round (median of the per-round ratios).

    .venv/bin/python bench/program_parts.py [--rounds 20] [--calls 20] [--tr]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import gradekit
from gradekit import Outputs, Sample
from gradekit.process import limits
from gradekit.process.commands import DEFAULT_MEMORY_LIMIT, run
from gradekit.process.limits import launcher, limit_prefix
from gradekit.process.scratch import Sandbox
from gradekit.registry.entries import GraderEntry
from gradekit.run.runner import run_suite
from gradekit.suite.model import Case, Suite, Turn

SCRIPT = "import sys; print(sys.stdin.read().upper())"
ARGV = [sys.executable, "-c", SCRIPT]
TR = ["tr", "a-z", "A-Z"]
"""`--tr`: the same work by a small C program (a millisecond, not fifteen): gradekit's own
costs stand out."""
TEXT = "answer number 7"


def sides(calls: int, argv: list[str]) -> dict[str, Callable[[], None]]:
    """Each side: `calls` commands `argv`, as that side runs them."""
    prefix = _prlimit_prefix()
    launched = limit_prefix(DEFAULT_MEMORY_LIMIT, None) if launcher() is not None else None
    box = Sandbox(None)  # one folder for the sides that do not make their own
    env = box.env()
    grader = gradekit.create(
        "program", config={"command": argv, "expected_output": TEXT.upper(), "sandbox": "none"}
    )
    sample = Sample(output=TEXT)
    never = threading.Event()
    entry = GraderEntry(grader=grader, kind="program", name="program")
    cases = [Case(f"c{index}", (Turn(sample, (entry,)),)) for index in range(calls)]
    suite = Suite("program_parts", lambda: iter(cases))

    def plain() -> None:
        subprocess.run(argv, input=TEXT.encode(), capture_output=True, check=True)

    def behind(limiter: tuple[str, ...]) -> Callable[[], None]:
        def command() -> None:
            subprocess.run(
                [*limiter, *argv],
                input=TEXT.encode(),
                capture_output=True,
                env=env,
                cwd=box.cwd,
                start_new_session=True,
                check=True,
            )

        return command

    def process_run() -> None:
        run(argv, cwd=box.cwd, env=env, timeout=30, stdin=TEXT)

    def fresh_root() -> None:
        with Sandbox(None, defer=True) as scratch:
            run(argv, cwd=scratch.cwd, env=scratch.env(), timeout=30, stdin=TEXT)

    def spare_root() -> None:
        with Sandbox(None, defer=True, reuse=True) as scratch:
            run(argv, cwd=scratch.cwd, env=scratch.env(), timeout=30, stdin=TEXT)

    def grade() -> None:
        result = grader.grade_blocking(sample, never)
        if not result.passed:
            raise SystemExit(f"the grade failed: {result.message}")

    def graded_suite() -> None:
        report = run_suite(suite, jobs=1, outputs=Outputs(keep_cases=False))
        if report.summary.passed != calls:
            raise SystemExit(f"the run's grades did not all pass: {report.summary}")

    def repeated(command: Callable[[], None]) -> Callable[[], None]:
        def commands() -> None:
            for _ in range(calls):
                command()

        return commands

    one_by_one = {
        "plain": plain,
        "prlimit": behind(prefix),
        **({"launcher": behind(launched)} if launched is not None else {}),
        "process.run": process_run,
        "run + fresh root": fresh_root,
        "run + spare root": spare_root,
        "grade": grade,
    }
    return {
        **{name: repeated(command) for name, command in one_by_one.items()},
        "run_suite": graded_suite,
    }


def _prlimit_prefix() -> tuple[str, ...]:
    """gradekit's `prlimit` prefix for the 2 GiB data limit, the launcher left aside."""
    built = launcher
    setattr(limits, "launcher", lambda: None)  # noqa: B010 - the module's name, swapped a moment
    try:
        prefix = limit_prefix(DEFAULT_MEMORY_LIMIT, None)
    finally:
        setattr(limits, "launcher", built)  # noqa: B010
    if prefix is None:
        raise SystemExit("prlimit (util-linux) is not installed: this benchmark compares it")
    return prefix


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def measure(rounds: int, calls: int, argv: list[str]) -> dict[str, dict[str, list[float]]]:
    """Per side: milliseconds per command (wall, parent CPU, children's CPU), one per round."""
    table = sides(calls, argv)
    figures: dict[str, dict[str, list[float]]] = {
        name: {"wall": [], "cpu": [], "children": []} for name in table
    }
    for side in table.values():  # warm up: imports, the probe of prlimit, the file cache
        side()
    for round_ in range(rounds):
        order = list(table.items())
        if round_ % 2:
            order.reverse()
        for name, side in order:
            own, children = _cpu()
            started = time.perf_counter()
            side()
            wall = time.perf_counter() - started
            own_after, children_after = _cpu()
            figures[name]["wall"].append(wall / calls * 1e3)
            figures[name]["cpu"].append((own_after - own) / calls * 1e3)
            figures[name]["children"].append((children_after - children) / calls * 1e3)
    return figures


def report(figures: dict[str, dict[str, list[float]]]) -> str:
    """The figures as a Markdown table."""
    lines = [
        "| side | wall (ms) | parent CPU (ms) | children's CPU (ms) | wall / plain |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    plain = figures["plain"]["wall"]
    for name, side in figures.items():
        ratio = statistics.median(s / p for s, p in zip(side["wall"], plain, strict=True))
        lines.append(
            f"| {name} | {statistics.median(side['wall']):.2f} | "
            f"{statistics.median(side['cpu']):.2f} | "
            f"{statistics.median(side['children']):.2f} | {ratio:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=20, help="commands per side and round")
    parser.add_argument(
        "--tr", action="store_true", help="run `tr a-z A-Z` instead of the Python command"
    )
    args = parser.parse_args(argv)
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    argv = ARGV
    if args.tr:
        found = shutil.which(TR[0])
        if found is None:
            raise SystemExit("tr (coreutils) is not on PATH")
        argv = [found, *TR[1:]]
    print(f"command: {' '.join(argv)}")
    figures = measure(args.rounds, args.calls, argv)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(report(figures))


if __name__ == "__main__":
    main()
