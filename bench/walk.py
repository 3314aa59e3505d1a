"""How far a small run walks through gradekit's modules, and how big the house is (issue 29).

For a two-case suite (written into a temporary folder: two single-turn cases, an `equality`
and a `contains` grader at the suite's level, one case passing and one failing), each walk
runs in a fresh child process of this interpreter, with a profile function installed on the
main thread (`sys.setprofile`) and on every thread started afterwards (`threading.setprofile`:
the runner grades in threads):

- `api`: `import gradekit`, `gradekit.load_suite(path)`, `gradekit.run_suite(suite)`,
  `gradekit.report.write_json(report, path)`: the Python API from the YAML file to the JSON
  report;
- `cli`: what the `gradekit` console script does (`sys.exit(gradekit.cli.main())`, the
  arguments in `sys.argv`), for `gradekit run SUITE -o report.json`, after
  `from gradekit.cli import main` (inside the walk);
- `grade`: `import gradekit`, two graders from `gradekit.create` (`equality`, `contains`),
  `gradekit.grade(sample, graders)`: only the gradekit modules in `sys.modules` afterwards are
  counted (also after `import gradekit` alone).

What a walk counts, from the profile's `call` events (a Python function, a module's body, a
class body, or a generator or coroutine resumed; C functions are not counted) whose frame's
`f_globals["__name__"]` is `gradekit` or starts with `gradekit.` (a gradekit module):

- **modules**: the distinct gradekit modules with such an event, i.e. whose code ran;
- **changes**: in each thread, the gradekit call events in order; a change is one whose module
  differs from the one of the thread's previous gradekit call event (calls into other libraries
  in between are skipped); the sum over the threads;
- **calls**: the gradekit call events, all threads.

Each figure is given twice: for the whole walk (imports included: a module's body and what it
calls while it is imported count), and **outside imports**: only the events while no module
body (`<module>` frame, of any module) is running in that thread, i.e. the walk's own work
with the import-time code left out.

`--tree SRC` measures another checkout's `src` (put first on the children's path); several
`--tree` give one column each. The static figures of each tree: modules (`*.py` under
`src/gradekit`), source lines, the `.py` files at the top of `src/gradekit`, and the import
circles: strongly connected components of more than one module in the graph of every import
(at a module's top, inside a function, under `if TYPE_CHECKING:`), edges to the `gradekit`
facade and from a package to its own submodules left out, as tests/test_architecture.py does.

    .venv/bin/python bench/walk.py                                  # this checkout
    .venv/bin/python bench/walk.py --tree /tmp/before/src --tree src
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "src"
FACADE = "gradekit"

SUITE = """\
name: walk
graders:
  - kind: equality
  - kind: contains
    values: ["Paris"]
cases:
  - name: capital
    input: "What is the capital of France?"
    output: "Paris"
    expected: "Paris"
  - name: wrong-capital
    input: "What is the capital of France?"
    output: "Lyon"
    expected: "Paris"
"""
"""Two cases, an equality and a contains grader: the first case passes, the second fails."""


def is_gradekit(name: str) -> bool:
    """Whether a module name is gradekit's (the facade or one of its submodules)."""
    return name == FACADE or name.startswith(FACADE + ".")


class _Thread:
    """One thread's state: the module bodies running, its last gradekit module, its changes."""

    def __init__(self) -> None:
        self.bodies = 0
        self.last: str | None = None
        self.last_outside: str | None = None
        self.changes = 0
        self.changes_outside = 0
        self.calls = 0
        self.calls_outside = 0


class Tracer:
    """A profile function counting the gradekit modules whose code runs and the changes of
    module between consecutive gradekit call events, per thread (see the module docstring)."""

    def __init__(self) -> None:
        self.modules: set[str] = set()
        self.modules_outside: set[str] = set()
        self._threads: list[_Thread] = []
        self._local = threading.local()

    def _state(self) -> _Thread:
        state: _Thread | None = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = _Thread()
            self._threads.append(state)
        return state

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        """The function for `sys.setprofile` and `threading.setprofile`."""
        if event == "call":
            state = self._state()
            if frame.f_code.co_name == "<module>":
                state.bodies += 1  # the body itself is import-time code too
            name = frame.f_globals.get("__name__") or ""
            if is_gradekit(name):
                self.modules.add(name)
                state.calls += 1
                if state.last is not None and name != state.last:
                    state.changes += 1
                state.last = name
                if not state.bodies:
                    self.modules_outside.add(name)
                    state.calls_outside += 1
                    if state.last_outside is not None and name != state.last_outside:
                        state.changes_outside += 1
                    state.last_outside = name
        elif event == "return" and frame.f_code.co_name == "<module>":
            state = self._state()
            state.bodies = max(0, state.bodies - 1)

    def start(self) -> None:
        """Profile this thread and every thread started from now on."""
        threading.setprofile(self.profile)
        sys.setprofile(self.profile)

    def stop(self) -> None:
        """Stop profiling (threads still running keep their profile until they end)."""
        sys.setprofile(None)
        threading.setprofile(None)

    def figures(self) -> dict[str, Any]:
        """The walk's figures: modules, changes, calls, whole and outside imports; threads."""
        return {
            "modules": len(self.modules),
            "changes": sum(t.changes for t in self._threads),
            "calls": sum(t.calls for t in self._threads),
            "modules_outside": len(self.modules_outside),
            "changes_outside": sum(t.changes_outside for t in self._threads),
            "calls_outside": sum(t.calls_outside for t in self._threads),
            "threads": sum(1 for t in self._threads if t.calls),
            "module_names": sorted(self.modules),
            "module_names_outside": sorted(self.modules_outside),
        }


def gradekit_modules(names: Any) -> list[str]:
    """The gradekit module names among `names` (e.g. `sys.modules`), sorted."""
    return sorted(name for name in names if is_gradekit(name))


# The children. Each imports this file (its folder first on the path), starts a Tracer, walks,
# stops it and writes the figures as JSON to the file named last on its command line.
_WALK_API = """
import json, sys
sys.path.insert(0, sys.argv[1])
import walk
suite_path, report_path, out = sys.argv[2:5]
tracer = walk.Tracer()
tracer.start()
import gradekit
suite = gradekit.load_suite(suite_path)
report = gradekit.run_suite(suite)
gradekit.report.write_json(report, report_path)
tracer.stop()
figures = tracer.figures()
figures["exit"] = 0
open(out, "w").write(json.dumps(figures))
"""

_WALK_CLI = """
import json, sys
sys.path.insert(0, sys.argv[1])
import walk
suite_path, report_path, out = sys.argv[2:5]
sys.argv = ["gradekit", "run", suite_path, "-o", report_path]
tracer = walk.Tracer()
tracer.start()
from gradekit.cli import main
code = main()
tracer.stop()
figures = tracer.figures()
figures["exit"] = code
open(out, "w").write(json.dumps(figures))
"""

_GRADE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import walk
out = sys.argv[-1]
import gradekit
after_import = walk.gradekit_modules(sys.modules)
graders = [
    gradekit.create("equality", "equality", {}),
    gradekit.create("contains", "contains", {"values": ["Paris"]}),
]
results = gradekit.grade(gradekit.Sample(output="Paris", expected="Paris"), graders)
assert [r.passed for r in results] == [True, True], results
modules = walk.gradekit_modules(sys.modules)
figures = {"after_import": len(after_import), "modules": len(modules), "module_names": modules}
open(out, "w").write(json.dumps(figures))
"""

CHILDREN = {"api": _WALK_API, "cli": _WALK_CLI, "grade": _GRADE}


def run_child(kind: str, source: Path, folder: Path) -> dict[str, Any]:
    """Run one child (`api`, `cli` or `grade`) with `source` first on its path; its figures."""
    suite = folder / "suite.yaml"
    if not suite.exists():
        suite.write_text(SUITE, encoding="utf-8")
    report = folder / f"{kind}-report.json"
    out = folder / f"{kind}-figures.json"
    env = dict(os.environ, PYTHONPATH=str(source))
    command = [sys.executable, "-c", CHILDREN[kind], str(HERE), str(suite), str(report), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"the {kind} child failed ({done.returncode}):\n{done.stderr}")
    figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if kind != "grade":
        cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
        figures["cases"] = [(case["name"], case["passed"]) for case in cases]
    return figures


# The static figures of a tree.


def module_name(path: Path, source: Path) -> str:
    """The dotted name of the module at `path` under `source` (a package: its folder's)."""
    parts = list(path.relative_to(source).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, importer: str, is_package: bool, known: set[str]) -> Iterator[str]:
    """Every module an import of `tree` names: `from X import y` names X.y when that is a
    module in `known`, else X (as tests/test_architecture.py reads them)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = importer if is_package else importer.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                module = f"{base}.{module}" if module else base
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                yield submodule if submodule in known else module


def import_graph(source: Path) -> dict[str, set[str]]:
    """Each gradekit module under `source` and the gradekit modules it imports, wherever the
    import stands; edges to the facade and from a package to its own submodules left out."""
    paths = {module_name(p, source): p for p in (source / FACADE).rglob("*.py")}
    known = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = set(_imports(tree, name, path.name == "__init__.py", known)) & known
        graph[name] = {
            t for t in targets if t not in (name, FACADE) and not t.startswith(name + ".")
        }
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's, without recursion),
    each sorted; sorted by their first node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def house(source: Path) -> dict[str, Any]:
    """The static figures of the gradekit tree under `source` (a `src` folder)."""
    package = source / FACADE
    files = sorted(package.rglob("*.py"))
    top = sorted(p.name for p in package.glob("*.py"))
    found = circles(import_graph(source))
    return {
        "modules": len(files),
        "lines": sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files),
        "top": len(top),
        "top_besides_dunder": len([n for n in top if n not in ("__init__.py", "__main__.py")]),
        "circles": len(found),
        "circle_members": found,
    }


ROWS = (
    ("modules under src/gradekit", "house", "modules"),
    ("source lines", "house", "lines"),
    ("top-level .py files (in brackets: besides __init__, __main__)", "house", "top"),
    ("import circles, typing edges included", "house", "circles"),
    ("API walk: modules whose code runs", "api", "modules"),
    ("API walk: module changes", "api", "changes"),
    ("API walk: gradekit calls", "api", "calls"),
    ("API walk, outside imports: modules", "api", "modules_outside"),
    ("API walk, outside imports: changes", "api", "changes_outside"),
    ("`gradekit run -o`: modules whose code runs", "cli", "modules"),
    ("`gradekit run -o`: module changes", "cli", "changes"),
    ("`gradekit run -o`: gradekit calls", "cli", "calls"),
    ("`gradekit run -o`, outside imports: modules", "cli", "modules_outside"),
    ("`gradekit run -o`, outside imports: changes", "cli", "changes_outside"),
    ("`import gradekit`: gradekit modules imported", "grade", "after_import"),
    ("`import gradekit; gradekit.grade(...)`: gradekit modules imported", "grade", "modules"),
)


def cell(figures: dict[str, Any], part: str, key: str) -> str:
    """One table cell: the figure, with the top-level files besides the dunders in brackets."""
    value = figures[part][key]
    if (part, key) == ("house", "top"):
        return f"{value} ({figures['house']['top_besides_dunder']})"
    return str(value)


def measure(source: Path, folder: Path) -> dict[str, Any]:
    """Every figure of one tree."""
    figures = {"house": house(source)}
    for kind in CHILDREN:
        figures[kind] = run_child(kind, source, folder)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Measure each tree and print one table, a column per tree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tree", action="append", type=Path, help="a checkout's src folder (default: this one)"
    )
    parser.add_argument("--modules", action="store_true", help="list the modules of each walk")
    args = parser.parse_args(argv)
    trees = [path.resolve() for path in args.tree or [SOURCE]]
    columns = []
    with tempfile.TemporaryDirectory(prefix="gk-walk-") as temp:
        for number, tree in enumerate(trees):
            folder = Path(temp) / str(number)
            folder.mkdir()
            columns.append(measure(tree, folder))
    print("| figure | " + " | ".join(str(tree) for tree in trees) + " |")
    print("| --- |" + " --- |" * len(trees))
    for label, part, key in ROWS:
        print(f"| {label} | " + " | ".join(cell(c, part, key) for c in columns) + " |")
    for tree, figures in zip(trees, columns, strict=True):
        print(
            f"\n{tree}: threads with gradekit calls: api {figures['api']['threads']}, "
            f"cli {figures['cli']['threads']}; cases (name, passed): {figures['api']['cases']}"
        )
        for members in figures["house"]["circle_members"]:
            print(f"  circle: {' <-> '.join(members)}")
        if args.modules:
            for kind in CHILDREN:
                print(f"  {kind}: {' '.join(figures[kind]['module_names'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
