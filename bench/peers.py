"""The same checks on gradekit and on its peers (autoevals, evaldeck, inspect_ai), per call.

Each peer is installed into its own virtual environment under `bench/.peers/NAME` (made on
the first run, kept for the next; git-ignored) and timed there by its child script
(`bench/peer_children/child_NAME.py`) on the same samples, written once from a seed
(`peer_data.py`). gradekit's graders are called directly (`grader.grade(sample)`) in a child
of this interpreter (`child_gradekit.py`), a fresh one each round as each peer's is: a
process's own conditions (where its objects land in memory, its hash seed) move a per-call
figure by tens of percent, so every side is timed over as many processes. Every figure is CPU
time (`time.process_time`) per call, the garbage collector off, results dropped as they come.
Processes cannot be timed side by side, and the load of a shared machine changes from one to
the next, so every side, in its own process, times a plain-Python loop doing the bare check
on the same samples (`peer_data.plain_loop`) right after each repeat of its own check: a
side's cost is the median over the repeats of its time over the plain loop's (`x plain`), and
gradekit against a peer is the ratio of their costs. Each round runs gradekit's child and
then every peer's child once; the table shows the ratio against the fastest peer over all
rounds and its range from round to round.

    .venv/bin/python bench/peers.py [--samples 20000] [--repeat 7] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Any

from _timing import machine, median, paired_ratio
from peer_data import CHECKS, plain_loop, read, write

import gradekit

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
    done = subprocess.run([str(python), "-c", f"import {name}"], capture_output=True)
    return done.returncode == 0


def peer_version(python: Path, name: str) -> str:
    """The installed version of the peer's distribution."""
    code = f"import importlib.metadata as m; print(m.version({PEERS[name]!r}))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True).stdout.strip()


def measure(samples: int, repeat: int, rounds: int, seed: int = 2026) -> dict[str, Any]:
    """Per check and side: CPU µs per call and the plain loop's µs beside it, pass counts."""
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
    us: dict[str, dict[str, list[float]]] = {check: {} for check in CHECKS}
    plain_us: dict[str, dict[str, list[float]]] = {check: {} for check in CHECKS}
    passed: dict[str, dict[str, int]] = {check: {} for check in CHECKS}
    what: dict[str, dict[str, str]] = {check: {} for check in CHECKS}
    with tempfile.TemporaryDirectory(prefix="gradekit-peers-") as folder:
        path = write(Path(folder) / "samples.json", seed, samples)
        data = read(path)
        for check in CHECKS:
            passed[check]["plain"] = sum(plain_loop(check, data[check])())
        for _ in range(rounds):
            sides = [("gradekit", Path(sys.executable)), *pythons.items()]
            for name, python in sides:
                if isinstance(python, Path):
                    _run_child(name, python, path, repeat, figures, us, plain_us, passed, what)
    figures.update(us=us, plain_us=plain_us, passed=passed, what=what)
    return figures


def _run_child(  # noqa: PLR0917 - fills the figures of measure()
    name: str,
    python: Path,
    path: Path,
    repeat: int,
    figures: dict[str, Any],
    us: dict[str, dict[str, list[float]]],
    plain_us: dict[str, dict[str, list[float]]],
    passed: dict[str, dict[str, int]],
    what: dict[str, dict[str, str]],
) -> None:
    child = HERE / "peer_children" / f"child_{name}.py"
    done = subprocess.run(
        [str(python), str(child), str(path), str(repeat)], capture_output=True, text=True
    )
    if done.returncode != 0:
        if name == "gradekit":
            raise SystemExit(f"gradekit's side failed:\n{done.stderr.strip()}")
        figures["peers"][name] = {"unavailable": done.stderr.strip()[-300:]}
        return
    for check, result in json.loads(done.stdout).items():
        if "unavailable" in result:
            what[check][name] = "unavailable: " + result["unavailable"]
            continue
        us[check].setdefault(name, []).extend(result["us"])
        plain_us[check].setdefault(name, []).extend(result["plain_us"])
        passed[check][name] = result["passed"]
        what[check][name] = result["what"]


def table(figures: dict[str, Any]) -> str:
    """The figures as a Markdown table, with the paired ratios and whether each target is met.

    A side's cost is its time over the plain loop's timed beside it in the same process
    (`x plain`); gradekit against a peer is the ratio of the two.
    """
    names = list(PEERS)
    head = ["check", "plain µs", "gradekit µs", *(f"{n} µs" for n in names)]
    head += ["fastest peer", "gradekit / fastest peer", "round to round", "target met"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for check in CHECKS:
        sides, bases = figures["us"][check], figures["plain_us"][check]
        cost = {side: paired_ratio(sides[side], bases[side]) for side in sides}

        cells = [check, f"{median(bases['gradekit']):.2f}"]
        cells += [
            f"{median(sides[side]):.2f} ({cost[side]:.1f}x plain)" if side in sides else "none"
            for side in ("gradekit", *names)
        ]
        peers = [name for name in names if name in sides]
        if peers:
            fastest = min(peers, key=lambda name: cost[name])
            ratio = cost["gradekit"] / cost[fastest]
            rounds = _per_round(sides, bases, fastest, figures["repeat"])
            spread = f"{min(rounds):.2f}x-{max(rounds):.2f}x"
            cells += [fastest, f"{ratio:.2f}x", spread, "yes" if ratio < 1 else "**no**"]
        else:
            cells += ["none", "", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _per_round(
    sides: dict[str, list[float]], bases: dict[str, list[float]], peer: str, repeat: int
) -> list[float]:
    """gradekit's cost over `peer`'s in each round (each side's `repeat` figures of a round
    come from one process of its own)."""
    ratios = []
    for start in range(0, len(sides["gradekit"]), repeat):
        chunk = slice(start, start + repeat)
        ours = paired_ratio(sides["gradekit"][chunk], bases["gradekit"][chunk])
        theirs = paired_ratio(sides[peer][chunk], bases[peer][chunk])
        ratios.append(ours / theirs)
    return ratios


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
    lines.append("What each side's check calls:")
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
