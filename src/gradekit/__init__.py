"""gradekit: grade what AI agents produce.

A registry maps `kind` names to grader factories (discovered through the `gradekit.graders`
entry point group); every grader returns one uniform `GradeResult`; a runner grades suites of
samples concurrently. See the docs folder for the guides.

`import gradekit` is kept fast: the suite loader, the runner and every grader module are
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradekit._errors import (
    ConfigError,
    DuplicateKindError,
    GradekitError,
    PluginLoadError,
    Problem,
    UnknownKindError,
)
from gradekit._types import AsyncGrader, Grader, GradeResult, Sample, ToolCall

if TYPE_CHECKING:
    from gradekit._model import CaseReport, Suite, SuiteReport
    from gradekit._registry import Registry, create, kinds, register
    from gradekit._runner import grade, run_suite
    from gradekit._suite import load_suite

__all__ = [
    "AsyncGrader",
    "CaseReport",
    "ConfigError",
    "DuplicateKindError",
    "GradeResult",
    "GradekitError",
    "Grader",
    "PluginLoadError",
    "Problem",
    "Registry",
    "Sample",
    "Suite",
    "SuiteReport",
    "ToolCall",
    "UnknownKindError",
    "__version__",
    "create",
    "grade",
    "kinds",
    "load_suite",
    "register",
    "run_suite",
]

# Names served on first access, so their modules (and yaml) load only when used. The registry
# too: pytest imports `gradekit.testing.pytest_plugin` in every run of a project that has
# gradekit installed, and that must not scan entry points or import the registry.
_LAZY = {
    "Registry": "gradekit._registry",
    "create": "gradekit._registry",
    "kinds": "gradekit._registry",
    "register": "gradekit._registry",
    "CaseReport": "gradekit._model",
    "Suite": "gradekit._model",
    "SuiteReport": "gradekit._model",
    "grade": "gradekit._runner",
    "run_suite": "gradekit._runner",
    "load_suite": "gradekit._suite",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("gradekit")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradekit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
