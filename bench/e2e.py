"""`gradekit run` end to end against the plain floor script, for several triples of kinds.

Writes a dataset of single-turn cases (one JSONL line each: name, input, output, expected, one
tool call on every other case) and, for each triple of built-in deterministic kinds asked
(equality, numeric, contains, regex, json, behavior), a suite grading every case with those
three kinds. Then times child processes, alternating sides in every round:

- `gradekit run suite.yaml --no-samples -o report.json --quiet`;
- the floor (`FLOOR`), as issue 29 defines the plain script: it reads the same JSONL lines,
  does the same three checks with the standard library and writes one JSON file with each
  case's name, passed and score and each result's kind, name, passed and score
  (`json.dumps`).

With `--before SRC`, a third side runs an older gradekit (its source folder) the same way;
with `--stdlib`, another runs this gradekit with `GRADEKIT_JSON=stdlib` (the standard
library writes the JSON, as where orjson, the `fast` extra, is not installed).
Both gradekits' modules are compiled to bytecode first, as an installed package has them
(`_timing.compile_sources`: an unset cache would cost each child 0.1 s of compiling).
Each child's peak RSS comes from `os.wait4` (its own rusage). Prints, per triple, the median
wall time and cases/s of each side and the median over the rounds of gradekit's time divided
by the floor's in the same round; then the spread of each side's times across triples (the
"no slow path" target: gradekit's slowest triple within 1.2x of its fastest), by wall and by
CPU. `--all-triples` times all 20 triples of the six kinds (`TRIPLES` has four); over 20
triples a single slow run moves the spread, so give it 5 rounds or more.

    .venv/bin/python bench/e2e.py [--cases 100000] [--rounds 3] [--kinds a,b,c]... [--all-triples]
        [--keep DIR] [--before OLD/src] [--stdlib] [--model] [--same-report]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _timing import compile_sources, paired_ratio

GRADERS = {
    "equality": "{kind: equality}",
    "numeric": "{kind: numeric}",
    "contains": "{kind: contains, values: ['1']}",
    "regex": "{kind: regex, pattern: '^[0-9]+$'}",
    "json": "{kind: json}",
    "behavior": "{kind: behavior, required_tools: [search]}",
}
"""Each kind's grader entry in the benchmark's suites."""

TRIPLES = (
    ("equality", "numeric", "contains"),
    ("equality", "contains", "regex"),
    ("regex", "json", "behavior"),
    ("numeric", "json", "behavior"),
)
"""The triples timed by default: the issue's first one, and every kind at least once."""

FLOOR = r"""
import json, re, sys

kinds = sys.argv[1].split(",")
pattern = re.compile("^[0-9]+$")

def equality(output, expected, calls):
    return output == ("" if expected is None else str(expected))

def numeric(output, expected, calls):
    try:
        return abs(float(output) - float(expected)) <= 1e-6
    except (TypeError, ValueError):
        return False

def contains(output, expected, calls):
    return "1" in output

def regex(output, expected, calls):
    return pattern.search(output) is not None

def json_(output, expected, calls):
    try:
        json.loads(output)
    except ValueError:
        return False
    return True

def behavior(output, expected, calls):
    return any(call["name"] == "search" for call in calls)

checks = [(kind, {"json": json_}.get(kind) or globals()[kind]) for kind in kinds]
cases = []
with open("data.jsonl", encoding="utf-8") as lines:
    for line in lines:
        data = json.loads(line)
        output, expected = data["output"], data.get("expected")
        calls = data.get("tool_calls", [])
        results = []
        passed = True
        for kind, check in checks:
            ok = check(output, expected, calls)
            results.append({"kind": kind, "name": kind, "passed": ok, "score": 1.0 if ok else 0.0})
            passed = passed and ok
        cases.append({"name": data["name"], "passed": passed, "score": 1.0 if passed else 0.0,
                      "results": results})
with open("floor.json", "w", encoding="utf-8") as out:
    out.write(json.dumps({"suite": "e2e", "cases": cases}))
"""


SAME_REPORT_FLOOR = r"""
import json, re, sys, time

kinds = sys.argv[1].split(",")
pattern = re.compile("^[0-9]+$")

def equality(output, expected, calls):
    want = "" if expected is None else str(expected)
    ok = output == want
    return ok, (f"output equals expected {want!r}" if ok else
                f"output {output!r} does not equal expected {want!r}"), None

def numeric(output, expected, calls):
    try:
        got, want = float(output), float(expected)
    except (TypeError, ValueError):
        return False, f"output {output!r} is not a number", None
    ok = abs(got - want) <= 1e-6
    return ok, f"{got:g} {'is' if ok else 'is not'} within 1e-06 of {want:g}", None

def contains(output, expected, calls):
    ok = "1" in output
    return ok, ("output contains '1'" if ok else f"output {output!r} lacks '1'"), None

def regex(output, expected, calls):
    found = pattern.search(output)
    if found is None:
        return False, f"no match for /^[0-9]+$/ in {output!r}", {"match": None}
    return True, f"found {found[0]!r} matching /^[0-9]+$/", {"match": found[0]}

def json_(output, expected, calls):
    try:
        json.loads(output)
    except ValueError as error:
        return False, f"output is not valid JSON: {error}", None
    return True, "output is valid JSON", None

def behavior(output, expected, calls):
    count = sum(call["name"] == "search" for call in calls)
    ok = count > 0
    check = {"check": "required tool search", "passed": ok,
             "message": f"called {count} time(s)" if ok else "never called"}
    return ok, ("1/1 checks passed" if ok else "0/1 checks passed: required tool search"), {
        "checks": [check]}

checks = [(kind, {"json": json_}.get(kind) or globals()[kind]) for kind in kinds]
counts = {kind: [0, 0, 0.0] for kind in kinds}
passed_cases = 0
clock = time.perf_counter
encode = json.JSONEncoder(ensure_ascii=False).encode
started = clock()
with open("data.jsonl", encoding="utf-8") as lines, open("same.json", "w") as out:
    out.write('{"suite": "e2e", "cases": [')
    for number, line in enumerate(lines):
        data = json.loads(line)
        began = clock()
        output, expected = data["output"], data.get("expected")
        calls = data.get("tool_calls", [])
        results, passed = [], True
        for kind, check in checks:
            now = clock()
            ok, message, details = check(output, expected, calls)
            results.append({"kind": kind, "name": kind, "passed": ok, "score": 1.0 if ok else 0.0,
                            "message": message, "details": details, "error": None,
                            "advisory": False, "weight": 1.0,
                            "duration_ms": (clock() - now) * 1000.0})
            tally = counts[kind]
            tally[0 if ok else 1] += 1
            tally[2] += 1.0 if ok else 0.0
            passed = passed and ok
        passed_cases += passed
        score = 1.0 if passed else 0.0
        turn = {"index": 0, "passed": passed, "score": score, "errored": False,
                "results": results, "input": data.get("input"), "output": output,
                "expected": expected}
        if calls:
            turn["tool_calls"] = [{"name": c["name"], "arguments": c.get("arguments", {}),
                                   "result": None, "error": None, "turn": None} for c in calls]
        case = {"name": data["name"], "passed": passed, "score": score, "errored": False,
                "duration_ms": (clock() - began) * 1000.0, "turns": [turn], "metadata": {}}
        out.write(("\n  " if number == 0 else ",\n  ") + encode(case))
    cases = number + 1
    graders = {kind: {"passed": p, "failed": f, "errored": 0, "mean_score": s / cases}
               for kind, (p, f, s) in sorted(counts.items())}
    summary = {"cases": cases, "passed": passed_cases, "failed": cases - passed_cases,
               "errored": 0, "pass_rate": passed_cases / cases, "graders": graders}
    out.write('\n], "passed": %s, "complete": true, "duration_ms": %r, "summary": %s}\n' % (
        "true" if passed_cases == cases else "false", (clock() - started) * 1000.0,
        encode(summary)))
"""
"""With `--same-report`, the floor of the earlier runs in bench/RESULTS.md (before issue 29's):
a plain script that does the same checks, with messages like gradekit's kinds', and writes the
same report's content as `gradekit run -o report.json` with samples (each result's every key,
each turn's sample, the summary), one case at a time with `json.JSONEncoder`. It is timed
against `gradekit run -o report.json -q`, samples kept (side `samples`)."""


MODEL_FLOOR = r"""
import json, sys
from gradekit import CaseReport, Sample, ToolCall, create
from gradekit.report.json import case_json
from gradekit.report.model import ResultRecord, TurnReport

configs = {"contains": {"values": ["1"]}, "regex": {"pattern": "^[0-9]+$"},
           "behavior": {"required_tools": ["search"]}}
kinds = sys.argv[1].split(",")
graders = [create(kind, None, configs.get(kind, {})) for kind in kinds]
with open("data.jsonl", encoding="utf-8") as lines, open("model.json", "w") as out:
    out.write('{"suite": "e2e", "cases": [')
    first = True
    for line in lines:
        data = json.loads(line)
        calls = tuple(ToolCall(c["name"], c["arguments"]) for c in data.get("tool_calls", ()))
        sample = Sample(data["name"], 0, data["input"], data["output"], data["expected"], calls)
        records = tuple(ResultRecord(grader.grade(sample)) for grader in graders)
        passed = all(record.result.passed for record in records)
        score = sum(record.result.score for record in records) / len(records)
        turn = TurnReport(0, passed, score, records)
        case = CaseReport(data["name"], passed, score, (turn,))
        out.write(("\n  " if first else ",\n  ") + case_json(case))
        first = False
    out.write("\n]}\n")
"""
"""With `--model`, a side between the floor and `gradekit run`: the least a run can do whose
finished case is a `CaseReport` written through its one `to_dict` (issue 29, item 1) and whose
graders take DESIGN.md's frozen `Sample` and give its `GradeResult`. Per line: `json.loads`, the
`Sample` (and its `ToolCall`s), the three real graders, a `ResultRecord` each, a `TurnReport` and
a `CaseReport`, `case_json`. None of the run's other work: no check of the line (duplicate keys,
names, attempts), no policy, no bounded details, no summary, no second thread."""


def write_dataset(folder: Path, cases: int) -> None:
    """`data.jsonl`: `cases` single-turn cases; one in seven answers wrong, every other case
    made one `search` tool call."""
    with open(folder / "data.jsonl", "w", encoding="utf-8") as out:
        for index in range(cases):
            answer = index % 997
            given = answer + 1 if index % 7 == 0 else answer
            line: dict[str, object] = {
                "name": f"case-{index:07d}",
                "input": f"What is {answer} + 0?",
                "output": str(given),
                "expected": answer,
            }
            if index % 2:
                line["tool_calls"] = [{"name": "search", "arguments": {"q": f"{answer} + 0"}}]
            out.write(json.dumps(line) + "\n")


def write_suite(folder: Path, kinds: tuple[str, ...]) -> Path:
    """A suite grading the dataset with `kinds`."""
    suite = folder / f"suite-{'-'.join(kinds)}.yaml"
    entries = "".join(f"  - {GRADERS[kind]}\n" for kind in kinds)
    suite.write_text(f"name: e2e\ngraders:\n{entries}dataset: data.jsonl\n", encoding="utf-8")
    return suite


def timed(
    argv: list[str], folder: Path, env: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """Run `argv` in `folder`; its wall time (s), its CPU time (s, user and system, every
    thread) and its own peak RSS (MB)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv,
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): {errors.decode()}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def summary_of(path: Path) -> dict[str, object]:
    """The summary of a JSON report, read from its start or its end (the report may be huge,
    and its keys may come in any order)."""
    key = '"summary": '
    with open(path, "rb") as report:
        head = report.read(65536).decode(errors="replace")
        size = report.seek(0, os.SEEK_END)
        report.seek(max(0, size - 65536))
        tail = report.read().decode(errors="replace")
    cases = head.find('"cases": [')
    text = head if -1 < head.find(key) < cases else tail
    found: dict[str, object] = json.JSONDecoder().raw_decode(text, text.rfind(key) + len(key))[0]
    return found


def show(triples: list[tuple[str, ...]], cases: int, figures: dict[str, Any]) -> None:
    """Print each side's medians and the ratios of each round, per triple."""
    wall, cpu, peak = figures["wall"], figures["cpu"], figures["peak"]
    labels = ["+".join(kinds) for kinds in triples]
    for kinds in triples:
        label = "+".join(kinds)
        ours, floor = wall[f"gradekit {label}"], wall[f"floor {label}"]
        ratio = paired_ratio(ours, floor)
        ours_cpu, floor_cpu = cpu[f"gradekit {label}"], cpu[f"floor {label}"]
        cpu_ratio = paired_ratio(ours_cpu, floor_cpu)
        for side in ("floor", "model", "gradekit", "stdlib", "before", "same", "samples"):
            times = wall.get(f"{side} {label}")
            if not times:
                continue
            median = statistics.median(times)
            used = statistics.median(cpu[f"{side} {label}"])
            print(
                f"{side:8} {label:30} {median:7.2f} s {cases / median:9,.0f} cases/s "
                f"cpu {used:7.2f} s  peak {max(peak[f'{side} {label}']):6.1f} MB"
            )
        print(f"         {label:30} gradekit / floor: {ratio:.2f}x wall, {cpu_ratio:.2f}x cpu")
        same = cpu.get(f"same {label}")
        if same:
            with_samples = cpu[f"samples {label}"]
            same_ratio = paired_ratio(with_samples, same)
            print(f"         {label:30} samples / same-report floor: {same_ratio:.2f}x cpu")
        model = cpu.get(f"model {label}")
        if model:
            model_ratio = paired_ratio(model, floor_cpu)
            print(f"         {label:30} model / floor: {model_ratio:.2f}x cpu")
        plain = cpu.get(f"stdlib {label}")
        if plain:
            plain_ratio = paired_ratio(plain, floor_cpu)
            print(f"         {label:30} stdlib / floor: {plain_ratio:.2f}x cpu")
        old = wall.get(f"before {label}")
        if old:
            old_cpu = cpu[f"before {label}"]
            gain = paired_ratio(old, ours)
            cpu_gain = paired_ratio(old_cpu, ours_cpu)
            old_ratio = paired_ratio(old_cpu, floor_cpu)
            print(f"         {label:30} before / floor: {old_ratio:.2f}x cpu")
            print(f"         {label:30} before / gradekit: {gain:.2f}x wall, {cpu_gain:.2f}x cpu")
    for side in ("gradekit", "floor"):
        spreads = []
        for figure in (wall, cpu):
            times = {label: statistics.median(figure[f"{side} {label}"]) for label in labels}
            slowest, fastest = max(times, key=times.__getitem__), min(times, key=times.__getitem__)
            spreads.append(f"{times[slowest] / times[fastest]:.2f}x ({slowest} / {fastest})")
        print(f"slowest / fastest triple ({side}): {spreads[0]} wall, {spreads[1]} cpu")


def arguments() -> argparse.Namespace:
    """The command line's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kinds", action="append", help="a triple, comma-separated (repeatable)")
    parser.add_argument(
        "--all-triples",
        action="store_true",
        help=f"time every triple of the {len(GRADERS)} kinds (in place of --kinds)",
    )
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument(
        "--stdlib",
        action="store_true",
        help="also time gradekit with GRADEKIT_JSON=stdlib (the standard library writes the "
        "JSON, as where orjson is not installed)",
    )
    parser.add_argument(
        "--same-report",
        action="store_true",
        help="also time SAME_REPORT_FLOOR against gradekit run with samples (the floor that "
        "writes the same report's content)",
    )
    parser.add_argument(
        "--model",
        action="store_true",
        help="also time MODEL_FLOOR: the report model's objects and the real graders, with "
        "none of the run's other work",
    )
    parser.add_argument(
        "--before",
        type=Path,
        metavar="SRC",
        help="also time the gradekit whose `src` folder this is (a checkout of an older "
        "commit: `git archive COMMIT src | tar -x -C DIR`), run as `python -m gradekit` with "
        "it first on PYTHONPATH",
    )
    return parser.parse_args()


def sides_of(
    args: argparse.Namespace, triples: list[tuple[str, ...]], folder: Path
) -> dict[str, list[str]]:
    """Each side's command line, by label (`side triple`); each triple's suite written."""
    command = str(Path(sys.executable).parent / "gradekit")
    sides: dict[str, list[str]] = {}
    run = ["--no-samples", "-o", "report.json", "-q"]
    for kinds in triples:
        label = "+".join(kinds)
        suite = write_suite(folder, kinds)
        sides[f"floor {label}"] = [sys.executable, "-c", FLOOR, ",".join(kinds)]
        sides[f"gradekit {label}"] = [command, "run", suite.name, *run]
        if args.same_report:
            sides[f"same {label}"] = [sys.executable, "-c", SAME_REPORT_FLOOR, ",".join(kinds)]
            sides[f"samples {label}"] = [command, "run", suite.name, "-o", "report.json", "-q"]
        if args.model:
            sides[f"model {label}"] = [sys.executable, "-c", MODEL_FLOOR, ",".join(kinds)]
        if args.stdlib:
            sides[f"stdlib {label}"] = sides[f"gradekit {label}"]
        if args.before:
            module = [sys.executable, "-m", "gradekit"]
            sides[f"before {label}"] = [*module, "run", suite.name, *run]
    return sides


def main() -> None:
    """Run the benchmark and print the figures."""
    args = arguments()
    if args.all_triples:
        triples = list(itertools.combinations(GRADERS, 3))
    elif args.kinds:
        triples = [tuple(k.split(",")) for k in args.kinds]
    else:
        triples = list(TRIPLES)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gradekit-bench-e2e-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        write_dataset(folder, args.cases)
        # Found, not imported: each child's peak RSS counts the memory it was forked with.
        spec = importlib.util.find_spec("gradekit")
        assert spec is not None and spec.submodule_search_locations
        compile_sources(*spec.submodule_search_locations, *([args.before] if args.before else []))
        sides = sides_of(args, triples, folder)
        envs = {
            "before": dict(os.environ, PYTHONPATH=str(args.before)) if args.before else None,
            "stdlib": dict(os.environ, GRADEKIT_JSON="stdlib"),
        }
        wall: dict[str, list[float]] = {label: [] for label in sides}
        peak: dict[str, list[float]] = {label: [] for label in sides}
        cpu: dict[str, list[float]] = {label: [] for label in sides}
        for round_ in range(args.rounds):
            order = list(sides.items())
            if round_ % 2:  # alternate: every other round runs the sides the other way round
                order.reverse()
            for label, argv in order:
                env = envs.get(label.split()[0])
                seconds, used, mb = timed(argv, folder, env)
                wall[label].append(seconds)
                cpu[label].append(used)
                peak[label].append(mb)
                if label.split()[0] not in ("floor", "model", "same"):
                    counted = summary_of(folder / "report.json")["cases"]
                    if counted != args.cases:
                        raise SystemExit(f"{label}: the report counts {counted} cases")
        print(f"cases: {args.cases:,}, rounds: {args.rounds}, load: {os.getloadavg()}")
        show(triples, args.cases, {"wall": wall, "cpu": cpu, "peak": peak})
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
