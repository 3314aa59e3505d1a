"""Fixtures for the `code` kind: user modules written to real folders, and a clean import state.

Module names are global to a Python process, so every test that writes a grader module gets
`sys.modules` and `sys.path` restored afterwards, and uses a module name of its own.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import my_benchmarks
import pytest


@pytest.fixture(autouse=True)
def clean_imports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Forget grader modules written by the test, and folders it added to sys.path.

    Only modules loaded from the test's temporary folders are forgotten: dropping a library
    module imported lazily during the test (cattrs.errors) would split its classes in two.
    """
    base = str(tmp_path_factory.getbasetemp().resolve())
    path = list(sys.path)
    yield
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(base):
            del sys.modules[name]
    sys.path[:] = path
    my_benchmarks.CALLS.clear()
    my_benchmarks.CONTEXTS.clear()


@pytest.fixture
def write_module(tmp_path: Path) -> Callable[..., Path]:
    """Write `name.py` with `source` into a folder (default: a fresh suite folder)."""

    def write(name: str, source: str, folder: Path | None = None) -> Path:
        folder = tmp_path / "suite" if folder is None else folder
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return folder

    return write
