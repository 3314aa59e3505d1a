"""The layout's promises (docs/architecture.md, DESIGN.md's layer order): imports run one way
between the packages, counting every import (at a module's top, inside a function, under
`if TYPE_CHECKING:`); no module below the `gradekit` facade imports it; no private name crosses a
package; no import circle; each package's docstring says what it really imports; modules sized
by cohesion."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SOURCE / "gradekit"

ALLOWED = {
    "core": set(),
    "process": {"core"},
    "graders": {"process", "core"},
    "registry": {"process", "core"},
    "suite": {"registry", "process", "core"},
    "report": {"core"},
    "history": {"report", "core"},
    "run": {"suite", "registry", "history", "report", "graders", "process", "core"},
    "testing": {"run", "suite", "registry", "history", "report", "graders", "process", "core"},
    "cli": {
        "testing",
        "run",
        "suite",
        "registry",
        "history",
        "report",
        "graders",
        "process",
        "core",
    },
}
"""Which layers each layer may import, besides its own: `cli -> testing -> run -> suite ->
registry -> core`, `run -> history -> report -> core`, `graders -> process -> core`. The
order is partial: the registry and the suite reach `process` beside `core` (a `sandbox:` mode
is checked when an entry or a suite is loaded), which is below neither chain's upper layers."""

FACADE = "gradekit"

MAX_LINES = 600
SMALL_LINES = 60
SMALL_BECAUSE = re.compile(r"\bsmall\b.*\bbecause\b", re.IGNORECASE | re.DOTALL)
"""A module under SMALL_LINES says why it stands alone ("small because ...") in its docstring."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def package_of(name: str) -> str:
    """The package a module belongs to (a package's `__init__` belongs to itself)."""
    if MODULES[name].name == "__init__.py":
        return name
    return name.rpartition(".")[0]


def layer(name: str) -> str:
    parts = name.split(".")
    if name == FACADE:
        return "facade"
    if name in ("gradekit.code", "gradekit.core") or parts[1] == "core":
        return "core"
    if parts[1] == "__main__":
        return "cli"
    return parts[1]


class Edge:
    """One import: the module imported and the names taken from it."""

    def __init__(self, target: str, names: tuple[str, ...]) -> None:
        self.target = target
        self.names = names


def _resolve(node: ast.ImportFrom, importer: str) -> str | None:
    module = node.module or ""
    if node.level:
        base = importer if MODULES[importer].name == "__init__.py" else importer.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        module = f"{base}.{module}" if module else base
    return module if module == FACADE or module.startswith(FACADE + ".") else None


def edges_of(name: str) -> Iterator[Edge]:
    """Every gradekit module `name` imports, wherever the import stands."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == FACADE or alias.name.startswith(FACADE + "."):
                    yield Edge(alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node, name)
            if module is None:
                continue
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                if submodule in MODULES:
                    yield Edge(submodule, ())
                else:
                    yield Edge(module, (alias.name,))


EDGES = {name: [edge for edge in edges_of(name) if edge.target in MODULES] for name in MODULES}
GRAPH = {name: {edge.target for edge in edges} - {name} for name, edges in EDGES.items()}


def test_the_graph_is_read_from_real_modules() -> None:
    assert "gradekit.run.runner" in GRAPH
    assert any(target.startswith("gradekit.run.") for target in GRAPH["gradekit.run.runner"])
    assert "gradekit.core.errors" in GRAPH["gradekit.run.runner"] or any(
        "gradekit.core.errors" in GRAPH[target] for target in GRAPH["gradekit.run.runner"]
    )


def test_no_import_circle() -> None:
    # Every edge counts, typing imports included: a circle closed through `TYPE_CHECKING` still
    # means two modules that cannot be read apart. Depth-first search for a back edge.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        stack.append(name)
        for target in sorted(GRAPH[name]):
            if target == FACADE or target.startswith(name + "."):
                continue
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[name] = 2
        return None

    for name in sorted(GRAPH):
        if name not in state:
            cycle = visit(name)
            assert cycle is None, "import circle: " + " -> ".join(cycle)


BELOW_FACADE = sorted(name for name in MODULES if layer(name) not in ("facade", "cli"))


@pytest.mark.parametrize("name", BELOW_FACADE)
def test_no_module_below_the_facade_imports_it(name: str) -> None:
    assert FACADE not in GRAPH[name], f"{name} imports the `gradekit` facade: import the module"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if layer(n) != "facade"))
def test_imports_run_one_way(name: str) -> None:
    own = layer(name)
    wrong = sorted(
        t for t in GRAPH[name] if t != FACADE and layer(t) != own and layer(t) not in ALLOWED[own]
    )
    assert not wrong, f"{name} ({own}) may not import {wrong}"


def _private(word: str) -> bool:
    return word.startswith("_") and not word.startswith("__")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_crosses_a_package(name: str) -> None:
    # The packages of the layout (cli, run, report ...): a subpackage shares its package's
    # private helpers (graders/prompt/ reads graders/_text.py).
    own = layer(name)
    crossing = []
    for edge in EDGES[name]:
        if layer(edge.target) == own:
            continue
        private_module = any(_private(part) for part in edge.target.split("."))
        private_names = [n for n in edge.names if _private(n)]
        if private_module or private_names:
            crossing.append(f"{edge.target} {private_names or ''}".strip())
    assert not crossing, f"{name} imports private names of another package: {crossing}"


def _declared_imports(doc: str) -> set[str]:
    found = re.search(r"May import:(.*?)(?:\n\s*\n|$)", doc, re.DOTALL)
    assert found, "say what the package may import in a `May import:` paragraph"
    return set(re.findall(r"`(\w+)`", found.group(1))) & set(ALLOWED)


PACKAGES = sorted(module_name(p) for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_says_what_it_really_imports(package: str) -> None:
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8"))) or ""
    own = layer(package)
    declared = _declared_imports(doc) - {own}
    assert declared <= ALLOWED[own], f"{package} declares {declared - ALLOWED[own]} it may not"
    members = [n for n in MODULES if n == package or n.startswith(package + ".")]
    used = {layer(t) for n in members for t in GRAPH[n] if t != FACADE} - {own}
    assert used <= declared, f"{package} imports {sorted(used - declared)}: say so (`May import:`)"


def test_at_most_nine_modules_at_the_top() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 9, top


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=module_name)
def test_modules_sized_by_cohesion(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines: more than one concept?"
    if lines < SMALL_LINES and path.name not in ("__init__.py", "__main__.py"):
        doc = ast.get_docstring(ast.parse(text)) or ""
        assert SMALL_BECAUSE.search(doc), (
            f"{path} has {lines} lines: merge it into the module of its concept, or say in "
            'its docstring why it is small ("small because ...")'
        )
