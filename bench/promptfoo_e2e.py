"""promptfoo end to end against `gradekit run`, per case, on the same equals/contains/regex suite.

promptfoo is installed with npm into `bench/.peers/promptfoo` (made on the first run, kept;
git-ignored). Both tools read the same generated cases (seeded): promptfoo a config whose
`echo` provider returns the rendered prompt `{{output}}`, so each test's output is the case's
output with no model, asserted with `equals` (the case's expected text), `contains` and
`regex`; gradekit a suite with `equality`, `contains` and `regex` over a JSONL dataset. Each
command is a fresh process, timed in wall and CPU (user + system of the child and its
children); the sides alternate. Per case: the time of a run of N cases over N, and the
marginal cost, (time of N cases - time of 10 cases) / (N - 10), which leaves start-up out.
Ratios are medians over the rounds of promptfoo's time over gradekit's in the same round.

    .venv/bin/python bench/promptfoo_e2e.py [--cases 5000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _timing import machine, median, paired_ratio

HERE = Path(__file__).resolve().parent
PROMPTFOO_HOME = HERE / ".peers" / "promptfoo"
PATTERN = r"order \d+"
SMALL = 10
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def cases(seed: int, count: int) -> list[dict[str, str]]:
    """`count` cases: about two thirds pass equality, half hold `order NNNN`."""
    rng = random.Random(seed)
    made = []
    for index in range(count):
        output = " ".join(rng.choice(WORDS) for _ in range(10))
        if index % 2 == 0:
            output += f" order {rng.randint(1000, 9999)}"
        expected = output if index % 3 else output + " x"
        made.append({"name": f"case-{index:06d}", "output": output, "expected": expected})
    return made


def write_gradekit(folder: Path, made: list[dict[str, str]]) -> Path:
    """The gradekit suite and its dataset."""
    with open(folder / "data.jsonl", "w", encoding="utf-8") as out:
        for case in made:
            out.write(json.dumps(case) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: promptfoo-peer\n"
        "graders:\n"
        "  - {kind: equality}\n"
        "  - {kind: contains, values: [order]}\n"
        f"  - {{kind: regex, pattern: '{PATTERN}'}}\n"
        "dataset: data.jsonl\n",
        encoding="utf-8",
    )
    return suite


def write_promptfoo(folder: Path, made: list[dict[str, str]]) -> Path:
    """The promptfoo config (JSON, which promptfoo reads as YAML)."""
    config = {
        "description": "gradekit peer benchmark",
        "prompts": ["{{output}}"],
        "providers": ["echo"],
        "defaultTest": {
            "assert": [{"type": "contains", "value": "order"}, {"type": "regex", "value": PATTERN}]
        },
        "tests": [
            {
                "description": case["name"],
                "vars": {"output": case["output"]},
                "assert": [{"type": "equals", "value": case["expected"]}],
            }
            for case in made
        ],
    }
    path = folder / "promptfooconfig.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def promptfoo_command() -> Path | str:
    """The promptfoo executable, installing it with npm first if needed; or why it is not."""
    executable = PROMPTFOO_HOME / "node_modules" / ".bin" / "promptfoo"
    if executable.exists():
        return executable
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    PROMPTFOO_HOME.mkdir(parents=True, exist_ok=True)
    if not (PROMPTFOO_HOME / "package.json").exists():
        (PROMPTFOO_HOME / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "promptfoo"],
        cwd=PROMPTFOO_HOME,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not executable.exists():
        lines = done.stderr.strip().splitlines()
        return f"npm install promptfoo failed: {lines[-1] if lines else done.returncode}"
    return executable


def promptfoo_version() -> str:
    """The installed promptfoo's version, from its package.json."""
    package = PROMPTFOO_HOME / "node_modules" / "promptfoo" / "package.json"
    version: str = json.loads(package.read_text(encoding="utf-8"))["version"]
    return version


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one command; exit 0 or 1/100 (failing cases) expected."""
    cpu = _cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1, 100):
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, _cpu() - cpu


def passed_counts(folder: Path) -> tuple[int, int]:
    """(gradekit's passing cases, promptfoo's passing tests) of the last runs in `folder`."""
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    promptfoo = json.loads((folder / "promptfoo.json").read_text(encoding="utf-8"))
    return report["summary"]["passed"], promptfoo["results"]["stats"]["successes"]


def measure(count: int, rounds: int, seed: int = 2026) -> dict[str, Any]:
    """Wall and CPU seconds of each side at `count` and at 10 cases, per round."""
    executable = promptfoo_command()
    if isinstance(executable, str):
        return {"unavailable": executable}
    gradekit = str(Path(sys.executable).parent / "gradekit")
    figures: dict[str, Any] = {"cases": count, "rounds": rounds, "version": promptfoo_version()}
    times: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="gradekit-promptfoo-") as temporary:
        env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1")
        env["PROMPTFOO_CONFIG_DIR"] = str(Path(temporary) / "promptfoo-home")
        folders = {}
        for size in (count, SMALL):
            folder = Path(temporary) / str(size)
            folder.mkdir()
            made = cases(seed, size)
            write_gradekit(folder, made)
            write_promptfoo(folder, made)
            folders[size] = folder
        sides = {
            "gradekit": [gradekit, "run", "suite.yaml", "-o", "report.json", "--quiet"],
            "promptfoo": [
                str(executable), "eval", "-c", "promptfooconfig.yaml", "--no-cache",
                "--no-table", "--no-progress-bar", "--no-write", "-o", "promptfoo.json",
            ],
        }  # fmt: skip
        for folder in folders.values():  # warm up: caches, bytecode, node's compile cache
            for argv in sides.values():
                timed_run(argv, folder, env)
        figures["passed"] = passed_counts(folders[count])
        for number in range(rounds):
            order = list(sides) if number % 2 == 0 else list(sides)[::-1]
            for size, folder in folders.items():
                for side in order:
                    key = f"{side} {size}"
                    times.setdefault(key, []).append(timed_run(sides[side], folder, env))
    figures["times"] = times
    return figures


def report(figures: dict[str, Any]) -> str:
    """The figures as text and a Markdown table."""
    if "unavailable" in figures:
        return f"promptfoo: not available ({figures['unavailable']})"
    count, times = figures["cases"], figures["times"]
    lines = [
        f"{count:,} cases (and {SMALL} for the start-up), {figures['rounds']} rounds; "
        f"promptfoo {figures['version']}; {machine()}",
        f"passing cases: gradekit {figures['passed'][0]:,}, promptfoo {figures['passed'][1]:,}",
        "",
        "| side | clock | run of N | per case | marginal per case |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    per: dict[tuple[str, int], list[float]] = {}
    for side in ("gradekit", "promptfoo"):
        for clock, index in (("wall", 0), ("CPU", 1)):
            big = [t[index] for t in times[f"{side} {count}"]]
            small = [t[index] for t in times[f"{side} {SMALL}"]]
            whole = [b / count * 1e6 for b in big]
            marginal = [(b - s) / (count - SMALL) * 1e6 for b, s in zip(big, small, strict=True)]
            per[side, index] = whole
            per[side + " marginal", index] = marginal
            lines.append(
                f"| {side} | {clock} | {median(big):.2f} s | {median(whole):,.0f} µs | "
                f"{median(marginal):,.0f} µs |"
            )
    lines.append("")
    for clock, index in (("wall", 0), ("CPU", 1)):
        whole = paired_ratio(per["promptfoo", index], per["gradekit", index])
        marginal = paired_ratio(per["promptfoo marginal", index], per["gradekit marginal", index])
        lines.append(
            f"promptfoo / gradekit per case, {clock}: {whole:.1f}x whole runs, "
            f"{marginal:.1f}x marginal (target: at least 20x)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(report(measure(args.cases, args.rounds)))


if __name__ == "__main__":
    main()
