"""Start-up cost of the registry: the first `create` of a built-in kind, and `gradekit kinds`.

Writes N tiny plugin distributions into a temporary folder, the way `pip install --target`
lays them out: a one-file package `gk_bench_plugin_NNN` with a factory, and a
`gk_bench_plugin_NNN-1.0.dist-info` folder holding METADATA and entry_points.txt (one dotted
kind, `gk_bench_NNN.kind`). Then times fresh interpreters: the wall time of the child
process (start-up included, bytecode cached as for any installed package) and its CPU time
(user + system, from getrusage: steadier than wall time on a shared machine), the commands
alternating within each repeat, and prints the medians of each:

- `python -c pass` (the baseline: bare interpreter start-up);
- `import attrs` (gradekit's core types are attrs classes: the floor of any first use);
- `import gradekit`, and `import gradekit; gradekit.create("numeric")`, without the plugins
  and with them on the path (a built-in kind must not pay for the plugins);
- a first grade: `gradekit.grade` of one sample by `create("numeric")`, from a fresh start;
- `gradekit.create("gk_bench_000.kind")` with the plugins (a dotted kind: one scan);
- `python -m gradekit kinds` (and `--json`) with the plugins, its output to a pipe, and
  `kinds` again with its output on a pseudo-terminal, as a user at a terminal sees it.

    .venv/bin/python bench/startup.py [--plugins 200] [--repeat 21] [--pythonpath SRC]

`--pythonpath SRC` puts another checkout's `src` first on the children's path, to measure
an older gradekit with the same interpreter (`git archive REV src | tar -x -C /tmp/old`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pty
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PLUGIN_MODULE = """\
from gradekit import GradeResult


class _Grader:
    def __init__(self, name, config):
        self.kind = "{kind}"
        self.name = name

    def grade(self, sample):
        return GradeResult(self.kind, self.name, True, 1.0, "ok")


def factory(name, config):
    return _Grader(name, config)
"""


def write_plugins(site: Path, count: int) -> None:
    """Lay out `count` installed plugin distributions in `site`, as pip --target would."""
    for number in range(count):
        module = f"gk_bench_plugin_{number:03d}"
        kind = f"gk_bench_{number:03d}.kind"
        (site / module).mkdir()
        (site / module / "__init__.py").write_text(PLUGIN_MODULE.format(kind=kind))
        info = site / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: gk-bench-plugin-{number:03d}\nVersion: 1.0\n"
        )
        (info / "entry_points.txt").write_text(f"[gradekit.graders]\n{kind} = {module}:factory\n")
        (info / "top_level.txt").write_text(module + "\n")
        (info / "RECORD").write_text("")


ON_A_TERMINAL = "gradekit kinds on a terminal, plugins"
"""The label of `kinds` whose output goes to a pseudo-terminal (rich may draw its table)."""


def _commands(site: Path, source: str | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    python = sys.executable
    bare = dict(os.environ)
    bare.pop("PYTHONPATH", None)
    # As installed packages run: from cached bytecode (the warm-up run writes it), not
    # compiling every module from source at every start.
    bare.pop("PYTHONDONTWRITEBYTECODE", None)
    if source:
        bare["PYTHONPATH"] = source
    plugins = dict(bare, PYTHONPATH=os.pathsep.join(filter(None, [source, str(site)])))
    create = "import gradekit; gradekit.create('numeric')"
    first_grade = (
        "import gradekit; gradekit.grade(gradekit.Sample(output='42', expected='42'), "
        "[gradekit.create('numeric')])"
    )
    return {
        "python -c pass": ([python, "-c", "pass"], bare),
        "import attrs": ([python, "-c", "import attrs"], bare),
        "import gradekit": ([python, "-c", "import gradekit"], bare),
        "create('numeric')": ([python, "-c", create], bare),
        "first grade": ([python, "-c", first_grade], bare),
        "import gradekit, plugins": ([python, "-c", "import gradekit"], plugins),
        "create('numeric'), plugins": ([python, "-c", create], plugins),
        "create('gk_bench_000.kind'), plugins": (
            [python, "-c", "import gradekit; gradekit.create('gk_bench_000.kind')"],
            plugins,
        ),
        "gradekit kinds, plugins": ([python, "-m", "gradekit", "kinds"], plugins),
        ON_A_TERMINAL: (
            [python, "-m", "gradekit", "kinds"],
            dict(plugins, COLUMNS="160", TERM="xterm"),
        ),
        "gradekit kinds --json, plugins": ([python, "-m", "gradekit", "kinds", "--json"], plugins),
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _drain(leader: int) -> None:
    """Read a pseudo-terminal until its other end is closed."""
    with contextlib.suppress(OSError):  # EIO: every writer has closed it
        while os.read(leader, 65536):
            pass


def _time(
    command: list[str], env: dict[str, str], *, terminal: bool = False
) -> tuple[float, float]:
    """(wall, CPU) milliseconds of one run of `command` in a child process; `terminal`: its
    output on a pseudo-terminal (read as it comes, as a terminal does) rather than discarded."""
    leader = follower = -1
    reader = None
    if terminal:
        leader, follower = pty.openpty()
        reader = threading.Thread(target=_drain, args=(leader,))
        reader.start()
    cpu = _cpu()
    started = time.perf_counter()
    output = follower if terminal else subprocess.DEVNULL
    subprocess.run(command, env=env, check=True, stdout=output)
    if reader is not None:
        os.close(follower)
        reader.join()
        os.close(leader)
    return (time.perf_counter() - started) * 1000, (_cpu() - cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugins", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--pythonpath", metavar="SRC", help="import gradekit from SRC")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gradekit-startup-") as folder:
        site = Path(folder)
        write_plugins(site, args.plugins)
        commands = _commands(site, args.pythonpath)
        for label, (command, env) in commands.items():  # warm the file cache, check each
            _time(command, env, terminal=label == ON_A_TERMINAL)
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
        for _ in range(args.repeat):
            for label, (command, env) in commands.items():
                times[label].append(_time(command, env, terminal=label == ON_A_TERMINAL))
    wall = {label: statistics.median(t[0] for t in runs) for label, runs in times.items()}
    cpu = {label: statistics.median(t[1] for t in runs) for label, runs in times.items()}
    print(f"{args.plugins} plugins, {args.repeat} repeats, Python {sys.version.split()[0]}")
    print(f"{'':40} {'wall':>9} {'CPU':>9}   (medians, ms)")
    for label in commands:
        print(f"{label:40} {wall[label]:9.1f} {cpu[label]:9.1f}")
    print("differences of the medians (wall, CPU):")
    pairs = [
        ("create('numeric')", "import gradekit"),
        ("create('numeric'), plugins", "import gradekit, plugins"),
        ("import gradekit", "python -c pass"),
        ("import attrs", "python -c pass"),
        ("create('numeric')", "python -c pass"),
        ("first grade", "python -c pass"),
        ("gradekit kinds, plugins", "python -c pass"),
        (ON_A_TERMINAL, "python -c pass"),
    ]
    for above, below in pairs:
        print(
            f"  {above} above {below}: {wall[above] - wall[below]:.1f}, "
            f"{cpu[above] - cpu[below]:.1f}"
        )


if __name__ == "__main__":
    main()
