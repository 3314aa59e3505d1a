"""Every benchmark of gradekit from one command, in sections, each printing same-run ratios.

    .venv/bin/python bench/run.py                       # every section, full sizes (long)
    .venv/bin/python bench/run.py --quick               # small sizes: a minute or two a section
    .venv/bin/python bench/run.py --only peers,kinds    # some sections
    .venv/bin/python bench/run.py --list                # the sections and what they run

Each section runs one benchmark script of this folder: in this process for the peer checks
(`peers.py`) and promptfoo (`promptfoo_e2e.py`), as a child process of this interpreter for
the others. Every script generates its data from a seed or from its index, so every run
measures the same work. A section whose script is missing or whose tools are not installed
says so and the run goes on. See bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


class Section(NamedTuple):
    """One benchmark: the script, what it measures, its arguments full and quick, a check."""

    script: str
    measures: str
    full: tuple[str, ...]
    quick: tuple[str, ...]
    needs: tuple[str, ...] = ()
    """Modules the section imports; a missing one makes the section "not available"."""


SECTIONS: dict[str, Section] = {
    "peers": Section(
        "peers.py",
        "equality, numeric, contains, regex, behavior per call: gradekit, plain loop, "
        "autoevals, evaldeck, inspect_ai",
        ("--samples", "20000", "--repeat", "7", "--rounds", "3"),
        ("--samples", "2000", "--repeat", "3", "--rounds", "1"),
    ),
    "promptfoo": Section(
        "promptfoo_e2e.py",
        "equals/contains/regex per case end to end: promptfoo (npm) against `gradekit run`",
        ("--cases", "5000", "--rounds", "3"),
        ("--cases", "300", "--rounds", "1"),
    ),
    "kinds": Section(
        "graders.py",
        "per-grade cost of each text kind against a plain-Python loop",
        (),
        ("--samples", "10000", "--repeat", "3"),
    ),
    "runner": Section(
        "runner.py",
        "run_suite against direct loops over the same graders",
        (),
        ("--samples", "20000", "--repeat", "3"),
    ),
    "cli": Section(
        "cli.py",
        "`gradekit run` to a JSON report against a plain script",
        (),
        ("--cases", "5000", "--repeat", "3"),
    ),
    "e2e": Section(
        "e2e.py",
        "`gradekit run` on 100,000 cases, several kind triples, against the plain floor, "
        "with orjson and with the standard library writing the JSON",
        ("--stdlib",),
        ("--cases", "10000", "--rounds", "1", "--stdlib"),
    ),
    "e2e_triples": Section(
        "e2e.py",
        "the same on 100,000 cases for all 20 triples of the six kinds: the spread of "
        "gradekit's times (no slow path) beside the floor's",
        ("--all-triples", "--rounds", "5"),
        ("--all-triples", "--cases", "5000", "--rounds", "1"),
    ),
    "e2e_million": Section(
        "e2e.py",
        "the same on 1,000,000 cases",
        ("--cases", "1000000", "--rounds", "1", "--stdlib"),
        ("--cases", "50000", "--rounds", "1", "--stdlib"),
    ),
    "code_lane": Section(
        "code_lane.py",
        "a code grader among text kinds: 20,000 cases of equality + contains + X, X = numeric, "
        "a trivial code grader, numeric with timeout: 5; CPU against X = numeric",
        ("--cases", "20000", "--rounds", "5"),
        ("--cases", "5000", "--rounds", "1"),
    ),
    "api_grade": Section(
        "api_grade.py",
        "`gradekit.grade` per call (numeric, in place; a trivial code grader, on a pool thread) "
        "against calling the grader itself",
        ("--calls", "20000", "--rounds", "5"),
        ("--calls", "5000", "--rounds", "1"),
    ),
    "baseline": Section(
        "baseline_compare.py",
        "`run --baseline`, `compare` and `--rerun-failed` against a 100,000-case report",
        (),
        ("--cases", "10000", "--rounds", "1"),
    ),
    "sample": Section(
        "sample.py",
        "building one `Sample`: the loader's way and a user's",
        (),
        ("--rounds", "3", "--number", "50000"),
    ),
    "memory": Section(
        "dataset_memory.py",
        "peak RSS of `gradekit run` on a 1,000,000-line dataset",
        (),
        ("--cases", "20000"),
    ),
    "startup": Section(
        "startup.py",
        "`import gradekit`, first `create`, `gradekit kinds` with 200 plugins",
        (),
        ("--repeat", "3"),
    ),
    "program": Section(
        "program_jobs.py",
        "`program` graders by --jobs against a thread pool of subprocess.run",
        (),
        ("--quick",),
    ),
    "program_parts": Section(
        "program_parts.py",
        "one `program` command part by part (limits, runner, scratch root, grade, run_suite) "
        "against subprocess.run",
        (),
        ("--rounds", "3", "--calls", "5"),
    ),
    "launcher": Section(
        "launcher_start.py",
        "what the launcher of limited commands adds to a command, built with glibc or musl",
        (),
        ("--rounds", "3", "--calls", "20"),
    ),
    "isolation": Section(
        "isolation.py",
        "process-isolated graders on warm workers, grades/s",
        (),
        ("--quick",),
    ),
    "dask": Section(
        "dask_vs_local.py",
        "`gradekit run` locally and on a LocalCluster; shipping results as lists and bytes",
        (),
        ("--cases", "10000", "--cpu-cases", "300", "--repeat", "1"),
        ("distributed",),
    ),
    "dask_driver": Section(
        "dask_driver.py",
        "the Dask driver's own CPU per case (its process alone, the LocalCluster's workers "
        "apart) on 100,000 light cases, against a local run's",
        (),
        ("--cases", "20000", "--rounds", "1"),
        ("distributed",),
    ),
    "sandbox": Section("sandbox.py", "what bubblewrap adds to one grade", (), ("--runs", "5")),
    "html": Section(
        "html_viewer.py",
        "the HTML report at scale in headless Chromium",
        (),
        ("--cases", "2000", "--repeat", "1"),
    ),
    "frame": Section(
        "frame.py",
        "`gradekit.report.to_frame` of a 200,000-case JSON report: CPU time and peak RSS",
        ("--cases", "200000", "--rounds", "3"),
        ("--cases", "10000", "--rounds", "1"),
        ("pandas",),
    ),
    "suite_load": Section(
        "suite_load.py", "`gradekit validate` on a large YAML suite", (), ("--cases", "20000")
    ),
    "walk": Section(
        "walk.py",
        "the modules a two-case run crosses (Python API, `gradekit run -o`), the modules "
        "`gradekit.grade` imports, and the tree's modules, lines and import circles",
        (),
        (),
    ),
    "judge": Section(
        "judge.py",
        "the judge against a local server answering in 50 ms: httpx, aiohttp and a plain "
        "asyncio client side by side, then gradekit's whole `prompt` grader (requests a second, "
        "CPU a call) and inspect_ai's `model_graded_qa` (the peer) at 64 and 256 connections",
        ("--calls", "2000", "--rounds", "3", "--concurrency", "64,256"),
        ("--calls", "500", "--rounds", "1", "--concurrency", "64", "--only", "aiohttp,gradekit"),
        ("aiohttp", "httpx"),
    ),
}


def unavailable(section: Section) -> str | None:
    """Why the section cannot run here, or None."""
    if not (HERE / section.script).exists():
        return f"bench/{section.script} is not in this checkout"
    missing = [name for name in section.needs if importlib.util.find_spec(name) is None]
    if missing:
        return f"{', '.join(missing)} is not installed (pip install -e '.[test]')"
    return None


def _in_process(script: str) -> Callable[[list[str]], None] | None:
    """The `main(argv)` of the scripts this runner calls in its own process."""
    if script == "peers.py":
        import peers

        return peers.main
    if script == "promptfoo_e2e.py":
        import promptfoo_e2e

        return promptfoo_e2e.main
    return None


def run_section(name: str, section: Section, quick: bool) -> bool:
    """Run one section, printing its figures; False if it failed."""
    arguments = list(section.quick if quick else section.full)
    print(f"\n## {name}: {section.measures}\n", flush=True)
    why = unavailable(section)
    if why:
        print(f"not available: {why}", flush=True)
        return True
    print(f"    python bench/{section.script} {' '.join(arguments)}".rstrip() + "\n", flush=True)
    started = time.perf_counter()
    main = _in_process(section.script)
    if main is not None:
        main(arguments)
        ok = True
    else:
        done = subprocess.run([sys.executable, str(HERE / section.script), *arguments])
        ok = done.returncode == 0
        if not ok:
            print(f"failed: exit code {done.returncode}")
    print(f"\n({name}: {time.perf_counter() - started:.0f} s)", flush=True)
    return ok


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections; exit 1 if one failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated sections (default: all)")
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--list", action="store_true", help="list the sections and stop")
    args = parser.parse_args(argv)
    if args.list:
        for name, section in SECTIONS.items():
            print(f"{name:11} bench/{section.script:20} {section.measures}")
        return 0
    names = args.only.split(",") if args.only else list(SECTIONS)
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    from _timing import machine

    print(f"# gradekit benchmarks ({'quick' if args.quick else 'full'}): {machine()}")
    failed = [name for name in names if not run_section(name, SECTIONS[name], args.quick)]
    if failed:
        print(f"\nfailed sections: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
