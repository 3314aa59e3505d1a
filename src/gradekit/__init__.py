"""gradekit: grade what AI agents produce.

A registry maps `kind` names to grader factories (discovered through the `gradekit.graders`
entry point group); every grader returns one uniform `GradeResult`; a runner grades suites of
samples concurrently. See the docs folder for the guides.

`import gradekit` is kept fast: every public name is imported on its first use, the core types
too (attrs, which builds them, is most of what a first use costs), so a program that only
imports gradekit, or reaches one corner of it, pays for no more.
"""

from __future__ import annotations

# `typing` costs more than the rest of this module: the idiom type checkers know instead.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from gradekit.core.context import current_suite_dir
    from gradekit.core.errors import (
        ConfigError,
        DuplicateKindError,
        ExecutorError,
        ExitRefusedError,
        GradekitError,
        OptionError,
        PatternTimeoutError,
        PluginLoadError,
        Problem,
        SelectionError,
        UnknownKindError,
        WriteError,
    )
    from gradekit.core.types import (
        AsyncGrader,
        BlockingGrader,
        Grader,
        GradeResult,
        InlineGrader,
        Sample,
        ToolCall,
    )
    from gradekit.registry.registry import Registry, create, kinds, register
    from gradekit.report.model import CaseReport, SuiteReport
    from gradekit.run.dask import DaskExecutor
    from gradekit.run.dispatch import agrade, grade
    from gradekit.run.resume import ResultsLog
    from gradekit.run.runner import arun_suite, run_suite
    from gradekit.run.settings import GraderDefaults, Outputs, Statistics
    from gradekit.suite.load import load_suite
    from gradekit.suite.model import Suite
    from gradekit.suite.selection import Selection

__all__ = [
    "AsyncGrader",
    "BlockingGrader",
    "CaseReport",
    "ConfigError",
    "DaskExecutor",
    "DuplicateKindError",
    "ExecutorError",
    "ExitRefusedError",
    "GradeResult",
    "GradekitError",
    "Grader",
    "GraderDefaults",
    "InlineGrader",
    "OptionError",
    "Outputs",
    "PatternTimeoutError",
    "PluginLoadError",
    "Problem",
    "Registry",
    "ResultsLog",
    "Sample",
    "Selection",
    "SelectionError",
    "Statistics",
    "Suite",
    "SuiteReport",
    "ToolCall",
    "UnknownKindError",
    "WriteError",
    "__version__",
    "agrade",
    "arun_suite",
    "create",
    "current_suite_dir",
    "grade",
    "kinds",
    "load_suite",
    "register",
    "run_suite",
]

# Names served on first access, so their modules (attrs and yaml among them) load only when
# used. The registry too: pytest imports `gradekit.testing.pytest_plugin` in every run of a
# project that has gradekit installed, and that must not scan entry points or import the
# registry.
_LAZY = {
    "ConfigError": "gradekit.core.errors",
    "DuplicateKindError": "gradekit.core.errors",
    "ExecutorError": "gradekit.core.errors",
    "ExitRefusedError": "gradekit.core.errors",
    "GradekitError": "gradekit.core.errors",
    "OptionError": "gradekit.core.errors",
    "PatternTimeoutError": "gradekit.core.errors",
    "PluginLoadError": "gradekit.core.errors",
    "Problem": "gradekit.core.errors",
    "SelectionError": "gradekit.core.errors",
    "UnknownKindError": "gradekit.core.errors",
    "WriteError": "gradekit.core.errors",
    "AsyncGrader": "gradekit.core.types",
    "BlockingGrader": "gradekit.core.types",
    "Grader": "gradekit.core.types",
    "GradeResult": "gradekit.core.types",
    "InlineGrader": "gradekit.core.types",
    "Sample": "gradekit.core.types",
    "ToolCall": "gradekit.core.types",
    "current_suite_dir": "gradekit.core.context",
    "Registry": "gradekit.registry.registry",
    "create": "gradekit.registry.registry",
    "kinds": "gradekit.registry.registry",
    "register": "gradekit.registry.registry",
    "CaseReport": "gradekit.report.model",
    "ResultsLog": "gradekit.run.resume",
    "Selection": "gradekit.suite.selection",
    "DaskExecutor": "gradekit.run.dask",
    "GraderDefaults": "gradekit.run.settings",
    "Outputs": "gradekit.run.settings",
    "Statistics": "gradekit.run.settings",
    "Suite": "gradekit.suite.model",
    "SuiteReport": "gradekit.report.model",
    "grade": "gradekit.run.dispatch",
    "agrade": "gradekit.run.dispatch",
    "run_suite": "gradekit.run.runner",
    "arun_suite": "gradekit.run.runner",
    "load_suite": "gradekit.suite.load",
}

# Public subpackages, imported on first access: `gradekit.report.write_json(...)` works after
# `import gradekit` alone.
_SUBPACKAGES = frozenset({"report", "code"})


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("gradekit")
    if name in _SUBPACKAGES:
        import importlib

        return importlib.import_module(f"gradekit.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradekit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
