"""bench/walk.py's counting: modules whose code runs, changes of module per thread, the
import-time code left out, and the import circles of a tree."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import walk  # noqa: E402


def _functions(module: str, source: str) -> dict[str, Any]:
    """The names `source` defines, run as the body of a module named `module`."""
    namespace: dict[str, Any] = {"__name__": module}
    exec(compile(source, f"<{module}>", "exec"), namespace)
    return namespace


A = _functions("gradekit.a", "def a():\n    return 1\n")
B = _functions("gradekit.b", "def b(f):\n    return f()\n")
OTHER = _functions("other", "def other(f):\n    return f()\n")


def _traced(work: Any) -> dict[str, Any]:
    tracer = walk.Tracer()
    tracer.start()
    try:
        work()
    finally:
        tracer.stop()
    return tracer.figures()


def test_is_gradekit_takes_the_facade_and_its_submodules_only() -> None:
    assert walk.is_gradekit("gradekit")
    assert walk.is_gradekit("gradekit.run.runner")
    assert not walk.is_gradekit("gradekit_plugin")
    assert walk.gradekit_modules(["os", "gradekit.b", "gradekit", "gradekitx"]) == [
        "gradekit",
        "gradekit.b",
    ]


def test_counts_modules_and_the_changes_between_consecutive_gradekit_calls() -> None:
    def work() -> None:
        A["a"]()  # gradekit.a
        A["a"]()  # gradekit.a again: no change
        B["b"](A["a"])  # gradekit.b then gradekit.a: two changes
        OTHER["other"](A["a"])  # other is skipped: gradekit.a after gradekit.a, no change

    figures = _traced(work)
    assert figures["module_names"] == ["gradekit.a", "gradekit.b"]
    assert figures["modules"] == 2
    assert figures["calls"] == 5
    assert figures["changes"] == 2
    assert figures["threads"] == 1


def test_each_thread_counts_its_own_changes_and_the_sum_is_reported() -> None:
    def work() -> None:
        A["a"]()
        thread = threading.Thread(target=lambda: B["b"](A["a"]))  # b, a: one change there
        thread.start()
        thread.join()
        A["a"]()  # the main thread's last was gradekit.a: no change

    figures = _traced(work)
    assert figures["threads"] == 2
    assert figures["changes"] == 1
    assert figures["calls"] == 4


def test_code_run_while_a_module_body_runs_counts_only_for_the_whole_walk() -> None:
    body = compile("b(a)\n", "<gradekit.c>", "exec")

    def work() -> None:
        A["a"]()
        # As an import does: the body of gradekit.c runs and calls b and a.
        exec(body, {"__name__": "gradekit.c", "a": A["a"], "b": B["b"]})
        A["a"]()

    figures = _traced(work)
    assert figures["module_names"] == ["gradekit.a", "gradekit.b", "gradekit.c"]
    # a, c, b, a, a: three changes
    assert (figures["modules"], figures["calls"], figures["changes"]) == (3, 5, 3)
    assert figures["modules_outside"] == 1  # gradekit.a, before and after the body
    assert (figures["calls_outside"], figures["changes_outside"]) == (2, 0)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "gradekit" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_import_graph_counts_typing_and_function_imports_not_the_facade(tmp_path: Path) -> None:
    source = _tree(
        tmp_path,
        {
            "__init__.py": "from gradekit.pkg import one\n",
            "pkg/__init__.py": "from . import one\n",  # a package to its own submodule
            "pkg/one.py": (
                "from typing import TYPE_CHECKING\n"
                "import gradekit\n"
                "if TYPE_CHECKING:\n    from gradekit.pkg.two import Two\n"
            ),
            "pkg/two.py": "def f():\n    from .one import x\n",
            "lone.py": "from gradekit.pkg import two\n",
        },
    )
    graph = walk.import_graph(source)
    assert graph == {
        "gradekit": set(),  # the facade's edges go to its own submodules
        "gradekit.pkg": set(),
        "gradekit.pkg.one": {"gradekit.pkg.two"},
        "gradekit.pkg.two": {"gradekit.pkg.one"},
        "gradekit.lone": {"gradekit.pkg.two"},
    }
    assert walk.circles(graph) == [["gradekit.pkg.one", "gradekit.pkg.two"]]
    figures = walk.house(source)
    assert figures["modules"] == 5
    assert figures["lines"] == 1 + 1 + 4 + 2 + 1
    assert (figures["top"], figures["top_besides_dunder"], figures["circles"]) == (2, 1, 1)


def test_circles_are_the_components_of_more_than_one_module() -> None:
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},
        "d": {"e"},
        "e": {"d"},
        "f": {"f", "a"},  # a self-edge is no circle of modules
        "g": set(),
    }
    assert walk.circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert walk.circles({"x": {"y"}, "y": set()}) == []
