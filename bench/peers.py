"""The same checks on gradekit and on its peers (autoevals, evaldeck, inspect_ai), per call.

Each peer is installed into its own virtual environment under `bench/.peers/NAME` (made on
the first run, kept for the next; git-ignored) and timed there by its child script
(`bench/peer_children/child_NAME.py`) on the same samples, written once from a seed
(`peer_data.py`). gradekit's graders are called directly (`grader.grade(sample)`) in this
process, beside a plain-Python loop doing the bare check. The sides alternate by round: each
round times gradekit and the plain loop here, then runs every peer's child; each ratio is the
median over the rounds of gradekit's median in that round over the peer's.

    .venv/bin/python bench/peers.py [--samples 20000] [--repeat 7] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import venv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradekit
from _timing import call_loop, machine, median, paired_ratio, per_call_us, timed
from gradekit import Sample
from peer_data import CHECKS, CONTAINS, REGEX, TOOL, read, write

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".peers"
PEERS = {"autoevals": "autoevals", "evaldeck": "evaldeck", "inspect_ai": "inspect-ai"}
"""Each peer's import name and the distribution pip installs."""


def peer_python(name: str) -> Path | str:
    """The peer's interpreter, installing the peer first if needed; or why it is not there."""
    folder = CACHE / name
    python = folder / "bin" / "python"
    if python.exists() and _imports(python, name):
        return python
    folder.parent.mkdir(parents=True, exist_ok=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", PEERS[name]], capture_output=True, text=True
    )
    if done.returncode != 0 or not _imports(python, name):
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"pip install {PEERS[name]} failed: {lines[-1] if lines else done.returncode}"
    return python


def _imports(python: Path, name: str) -> bool:
    return subprocess.run([str(python), "-c", f"import {name}"], capture_output=True).returncode == 0


def peer_version(python: Path, name: str) -> str:
    """The installed version of the peer's distribution."""
    code = f"import importlib.metadata as m; print(m.version({PEERS[name]!r}))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True).stdout.strip()


def gradekit_checks(data: dict[str, list[dict[str, Any]]]) -> dict[str, tuple[Any, list[Any]]]:
    """For each check, gradekit's grader and the samples it grades (built before timing)."""
    options: dict[str, tuple[str, dict[str, Any]]] = {
        "equality": ("equality", {}),
        "numeric": ("numeric", {}),
        "contains": ("contains", {"values": [CONTAINS]}),
        "regex": ("regex", {"pattern": REGEX}),
        "behavior": ("behavior", {"required_tools": [TOOL]}),
    }
    checks = {}
    for check, (kind, config) in options.items():
        samples = [
            Sample(output=s["output"], expected=s["expected"], tool_calls=s.get("tool_calls"))
            for s in data[check]
        ]
        checks[check] = (gradekit.create(kind, config=config), samples)
    return checks


def plain_loops(data: dict[str, list[dict[str, Any]]]) -> dict[str, Callable[[], Any]]:
    """For each check, a plain-Python loop over the same samples doing the bare check."""
    equality = [(s["output"], s["expected"]) for s in data["equality"]]
    numeric = [(s["output"], s["expected"]) for s in data["numeric"]]
    contains = [s["output"] for s in data["contains"]]
    texts = [s["output"] for s in data["regex"]]
    calls = [[call["name"] for call in s["tool_calls"]] for s in data["behavior"]]
    search = re.compile(REGEX).search

    def plain_equality() -> list[bool]:
        return [output == expected for output, expected in equality]

    def plain_numeric() -> list[bool]:
        return [abs(float(o) - float(e)) <= 1e-6 for o, e in numeric]

    def plain_contains() -> list[bool]:
        return [CONTAINS in output for output in contains]

    def plain_regex() -> list[bool]:
        return [search(text) is not None for text in texts]

    def plain_behavior() -> list[bool]:
        return [TOOL in names for names in calls]

    return {
        "equality": plain_equality,
        "numeric": plain_numeric,
        "contains": plain_contains,
        "regex": plain_regex,
        "behavior": plain_behavior,
    }


def measure(samples: int, repeat: int, rounds: int, seed: int = 2026) -> dict[str, Any]:
    """Every side's µs per check and round, the pass counts, and what each peer called."""
    pythons = {name: peer_python(name) for name in PEERS}
    figures: dict[str, Any] = {"samples": samples, "repeat": repeat, "rounds": rounds}
    figures["peers"] = {
        name: (
            {"version": peer_version(python, name)}
            if isinstance(python, Path)
            else {"unavailable": python}
        )
        for name, python in pythons.items()
    }
    with tempfile.TemporaryDirectory(prefix="gradekit-peers-") as folder:
        path = write(Path(folder) / "samples.json", seed, samples)
        data = read(path)
        ours = gradekit_checks(data)
        plain = plain_loops(data)
        us: dict[str, dict[str, list[float]]] = {c: {} for c in CHECKS}
        passed: dict[str, dict[str, int]] = {c: {} for c in CHECKS}
        what: dict[str, dict[str, str]] = {c: {} for c in CHECKS}
        for _ in range(rounds):
            for check, (grader, items) in ours.items():
                loop = call_loop(grader.grade, [(sample,) for sample in items])
                us[check].setdefault("gradekit", []).append(
                    median(per_call_us(loop, len(items), repeat))
                )
                passed[check]["gradekit"] = sum(grader.grade(s).passed for s in items)
                plain[check]()
                runs = [timed(plain[check]) / samples * 1e6 for _ in range(repeat)]
                us[check].setdefault("plain", []).append(median(runs))
                passed[check]["plain"] = sum(plain[check]())
            for name, python in pythons.items():
                if not isinstance(python, Path):
                    continue
                child = HERE / "peer_children" / f"child_{name}.py"
                done = subprocess.run(
                    [str(python), str(child), str(path), str(repeat)],
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    figures["peers"][name] = {"unavailable": done.stderr.strip()[-300:]}
                    continue
                for check, result in json.loads(done.stdout).items():
                    if "unavailable" in result:
                        what[check][name] = "unavailable: " + result["unavailable"]
                        continue
                    us[check].setdefault(name, []).append(median(result["us"]))
                    passed[check][name] = result["passed"]
                    what[check][name] = result["what"]
    figures.update(us=us, passed=passed, what=what)
    return figures


def table(figures: dict[str, Any]) -> str:
    """The figures as a Markdown table, with the paired ratios and whether each target is met."""
    names = list(PEERS)
    head = ["check", "gradekit µs", "plain µs", *(f"{n} µs" for n in names)]
    head += ["fastest peer", "gradekit / fastest peer", "target met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for check in CHECKS:
        sides = figures["us"][check]
        cells = [check, f"{median(sides['gradekit']):.2f}", f"{median(sides['plain']):.2f}"]
        cells += [f"{median(sides[n]):.2f}" if n in sides else "no such check" for n in names]
        peers = [n for n in names if n in sides]
        if peers:
            fastest = min(peers, key=lambda n: median(sides[n]))
            ratio = paired_ratio(sides["gradekit"], sides[fastest])
            cells += [fastest, f"{ratio:.2f}x", "yes" if ratio < 1 else "**no**"]
        else:
            cells += ["none", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(figures: dict[str, Any]) -> str:
    """The header, the table, the pass counts and what was called, as text."""
    lines = [
        f"{figures['samples']:,} samples per check, {figures['repeat']} repeats per round, "
        f"{figures['rounds']} rounds; {machine()}; gradekit {gradekit.__version__}"
    ]
    for name, peer in figures["peers"].items():
        lines.append(f"- {name}: {peer.get('version') or peer.get('unavailable')}")
    lines += ["", table(figures), "", "Samples passed per side (the same checks agree):"]
    for check in CHECKS:
        counts = ", ".join(f"{side} {n}" for side, n in figures["passed"][check].items())
        lines.append(f"- {check}: {counts}")
    lines.append("What each peer's check calls:")
    for check in CHECKS:
        for name, called in figures["what"][check].items():
            lines.append(f"- {check}, {name}: {called}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(report(measure(args.samples, args.repeat, args.rounds)))


if __name__ == "__main__":
    sys.exit(main())
