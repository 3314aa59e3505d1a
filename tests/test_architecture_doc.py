"""docs/architecture.md names only what exists: every path it writes in backticks
(`run/lanes.py`, `tests/test_architecture.py`) and every `gradekit.x.y` name is in the tree,
and its map names every module of `src/gradekit`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "gradekit"
DOC = REPO / "docs" / "architecture.md"

PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|md|c))`")
"""A path in backticks with at least one folder: from the repository's root when its first
folder is one of `ROOTS`, else from `src/gradekit/`."""

ROOTS = ("src", "tests", "docs", "bench", "examples", "plugins")

DOTTED = re.compile(r"\bgradekit(?:\.[A-Za-z_]\w*)+")
"""`gradekit.run.lanes`, `gradekit.core.context.RunContext`: modules, then at most one name
defined at the top of the last module (what follows that name is not checked)."""


def _file_of(path: str) -> Path:
    return REPO / path if path.split("/", maxsplit=1)[0] in ROOTS else SOURCE / path


def _module_file(parts: list[str]) -> Path | None:
    base = SOURCE.parent.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def _defined(path: Path) -> set[str]:
    """The names a module defines or imports at its top (inside `if` and `try` blocks too),
    and those its `__all__` lists (a facade's lazy names)."""
    names: set[str] = set()
    body = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value
                if isinstance(value, (ast.List, ast.Tuple)):
                    names.update(
                        e.value for e in value.elts if isinstance(e, ast.Constant) and e.value
                    )
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            body.extend(node.body)
            body.extend(node.orelse)
            if isinstance(node, ast.Try):
                body.extend(node.finalbody)
    return names


def _dotted_problem(name: str) -> str | None:
    parts = name.split(".")
    for length in range(len(parts), 0, -1):
        found = _module_file(parts[:length])
        if found is not None:
            break
    else:
        return f"{name}: no such module"
    if length < len(parts) and parts[length] not in _defined(found):
        return f"{name}: {'.'.join(parts[:length])} has no {parts[length]}"
    return None


def unknown_names(text: str) -> list[str]:
    """What `text` names that the tree does not hold."""
    missing = [path for path in PATH.findall(text) if not _file_of(path).exists()]
    for name in sorted(set(DOTTED.findall(text))):
        problem = _dotted_problem(name)
        if problem is not None:
            missing.append(problem)
    return missing


def unnamed_modules(text: str) -> list[str]:
    """The modules of `src/gradekit` that `text` does not name by path (a subpackage's
    `__init__.py` is named by its package's row)."""
    named = {_file_of(path).resolve() for path in PATH.findall(text)}
    return sorted(
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if (path.name != "__init__.py" or path.parent == SOURCE) and path.resolve() not in named
    )


def test_every_name_in_the_doc_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(PATH.findall(text)) > 100  # the doc still names modules in this form
    assert unknown_names(text) == []


def test_the_map_names_every_module() -> None:
    assert unnamed_modules(DOC.read_text(encoding="utf-8")) == []


def test_a_dead_name_is_found() -> None:
    # What the map named before issue 29: each is gone, and the check says so.
    old = (
        "`report/case_text.py`, `src/gradekit/_errors.py`, `run/every_turn.py`, "
        "gradekit.sandbox, gradekit.run.alike, gradekit.core.types.checked_result, "
        "`tests/test_no_such_test.py`"
    )
    assert len(unknown_names(old)) == 7
    alive = "`run/lanes.py`, gradekit.core.context.RunContext.state, gradekit.report.write_json"
    assert unknown_names(alive) == []
