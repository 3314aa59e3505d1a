"""What the launcher of limited commands adds to a command, by C library: glibc or musl.

gradekit's launcher (`process/launcher.c`) sets a command's limits on itself, then
execs the command: one more program start a command. This script builds the launcher's
source each way it can here (with `cc -static`, `cc` linked, `musl-gcc -static`), then times
`subprocess.run` of `/bin/true` bare and behind each build, and behind util-linux's
`prlimit`, the sides taking turns in every round. It also times a static program that does
nothing (`int main(void) { return 0; }`) built with each C library, and, on x86-64, the
`cpuid` instruction that glibc runs dozens of times as it starts, which a hypervisor may make
slow.

Prints the median over the rounds of the wall time per command and each side's time over
the bare command's in the same round.

    .venv/bin/python bench/launcher_start.py [--rounds 15] [--calls 100]
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import machine, median, paired_ratio

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "src" / "gradekit" / "process" / "launcher.c"
EMPTY = "int main(void) { return 0; }\n"
CPUID = r"""
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec start, end;
    unsigned int a, b, c, d;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < 1000; i++) {
        a = 0;
        c = 0;
        __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%.2f\n", ((end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec)) / 1e6);
    return 0;
}
"""
RECIPES = {
    "glibc, static": ("cc", "-static"),
    "glibc, linked": ("cc",),
    "musl, static": ("musl-gcc", "-static"),
}


def build(folder: Path, name: str, source: Path, recipe: tuple[str, ...]) -> Path | None:
    """`source` compiled by `recipe` into `folder`, or None where it cannot be."""
    compiler = shutil.which(recipe[0])
    if compiler is None:
        return None
    target = folder / name
    done = subprocess.run(
        [compiler, *recipe[1:], "-O2", "-o", str(target), str(source)], capture_output=True
    )
    return target if done.returncode == 0 else None


def sides(folder: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The commands to time, by side, and what could not be built."""
    true = shutil.which("true") or "/bin/true"
    empty = folder / "empty.c"
    empty.write_text(EMPTY)
    commands: dict[str, list[str]] = {"bare /bin/true": [true]}
    missing = []
    for label, recipe in RECIPES.items():
        launcher = build(folder, "launcher-" + label.replace(", ", "-"), SOURCE, recipe)
        if launcher is None:
            missing.append(f"launcher, {label}: {recipe[0]} cannot build it here")
        else:
            commands[f"launcher ({label})"] = [str(launcher), "-", "-", true]
    prlimit = shutil.which("prlimit")
    if prlimit is not None:
        commands["prlimit"] = [prlimit, "--core=0", "--", true]
    for label, recipe in RECIPES.items():
        if "-static" in recipe:
            program = build(folder, "empty-" + label.split(",")[0], empty, recipe)
            if program is not None:
                commands[f"a static {label.split(',')[0]} program doing nothing"] = [str(program)]
    return commands, missing


def cpuid_microseconds(folder: Path) -> float | None:
    """The time of one `cpuid` instruction here (x86-64 only), or None."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    source = folder / "cpuid.c"
    source.write_text(CPUID)
    program = build(folder, "cpuid", source, ("cc",))
    if program is None:
        return None
    runs = [
        float(subprocess.run([str(program)], capture_output=True, text=True).stdout)
        for _ in range(5)
    ]
    return median(runs)


def measure(commands: dict[str, list[str]], rounds: int, calls: int) -> dict[str, list[float]]:
    """Milliseconds per command, one figure per round, by side; sides take turns each round."""
    times: dict[str, list[float]] = {side: [] for side in commands}
    for _ in range(rounds):
        for side, argv in commands.items():
            started = time.perf_counter()
            for _ in range(calls):
                subprocess.run(argv, check=True)
            times[side].append((time.perf_counter() - started) / calls * 1e3)
    return times


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gradekit-bench-launcher-") as scratch:
        folder = Path(scratch)
        commands, missing = sides(folder)
        cpuid = cpuid_microseconds(folder)
        print(machine())
        times = measure(commands, args.rounds, args.calls)
    bare = times["bare /bin/true"]
    print(f"\n{args.calls} commands a side and round, medians of {args.rounds} rounds\n")
    print("| side | ms a command | over bare |")
    print("| --- | ---: | ---: |")
    for side, figures in times.items():
        print(f"| {side} | {median(figures):.3f} | {paired_ratio(figures, bare):.2f}x |")
    for line in missing:
        print(f"- {line}")
    if cpuid is not None:
        print(f"- one `cpuid` instruction: {cpuid:.2f} µs")


if __name__ == "__main__":
    sys.exit(main())
