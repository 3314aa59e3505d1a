"""gradekit.testing: the contract kit for grader packs, and hypothesis strategies.

- `GraderContract`: subclass it in a pack's tests, set `kind` and `configs`; its test methods
  are the contract every grader kind keeps (docs/testing-kit.md lists the rules).
- `check_grader(kind, config)`: the same contract without pytest; returns `Violation`s, each
  with its falsifying example.
- Strategies: `samples()`, `tool_calls()`, `texts()`, `numbers_as_text()`, `grade_results()`,
  `grader_entries()`.
- `assert_grade(sample, grader_or_entry)`: one sample graded inside any test; AssertionError
  when it fails, `GradeErrored` when the grader could not grade (docs/pytest.md).
- A pytest plugin (`pytest --gradekit-pack DIST`) and `gradekit check-pack DIST` run the
  contract over every kind an installed distribution registers.

Needs the `testing` extra (`pip install 'gradekit[testing]'`: hypothesis and pytest). Names
are loaded on first use, so importing the pytest plugin imports neither hypothesis nor the
registry.

The same plugin collects suite files as tests (`pytest suite.yaml`, docs/pytest.md).

May import: every package below the command line (`run`, `suite`, `registry`, `report`,
`graders`, `process`, `history`, `core`), hypothesis and pytest: it checks kinds as the
runner would use them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradekit.core.errors import GradeErrored
    from gradekit.testing._contract import GraderContract, check_grader
    from gradekit.testing._grading import assert_grade
    from gradekit.testing._strategies import (
        grade_results,
        grader_entries,
        numbers_as_text,
        samples,
        texts,
        tool_calls,
    )
    from gradekit.testing._subject import Violation

__all__ = [
    "GradeErrored",
    "GraderContract",
    "Violation",
    "assert_grade",
    "check_grader",
    "grade_results",
    "grader_entries",
    "numbers_as_text",
    "samples",
    "texts",
    "tool_calls",
]

_LAZY = {
    "GradeErrored": "gradekit.core.errors",
    "GraderContract": "gradekit.testing._contract",
    "Violation": "gradekit.testing._subject",
    "assert_grade": "gradekit.testing._grading",
    "check_grader": "gradekit.testing._contract",
    "grade_results": "gradekit.testing._strategies",
    "grader_entries": "gradekit.testing._strategies",
    "samples": "gradekit.testing._strategies",
    "tool_calls": "gradekit.testing._strategies",
    "numbers_as_text": "gradekit.testing._strategies",
    "texts": "gradekit.testing._strategies",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradekit.testing' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
