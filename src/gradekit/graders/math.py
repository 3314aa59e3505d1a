"""The `math` kind: the final answer in the output is mathematically equal to the expected one.

The comparison is math-verify's (`pip install 'gradekit[math]'`): LaTeX and plain answers
parsed into sympy, so `\\frac{3}{4}`, `3/4` and `0.75` are one answer, and so are `\\{1, 2\\}`
and `\\{2, 1\\}`, or `(x-1)(x+1)` and `x^2-1`. The library is looked for when a grader is
created and imported at its first grade (`gradekit.graders.math_check`), never by
`import gradekit`.

Symbolic work can take any time (sympy simplifies what it is given), and math-verify's own time
limit is a `SIGALRM`, which only a process's main thread can use. So each check runs in a warm
worker (`gradekit.process.workers`) that is killed at the kind's `check_timeout`: the grade
then fails, as a command past its timeout fails `program`. The option is not named `timeout`:
that common key of every entry stays the runner's limit on the whole grade, which also covers
a worker's start (seconds: it imports math-verify and sympy). Where no child process may be
started (the grade already runs in one: `isolation: process`, a Dask worker), the check runs
in the grading process, and the entry's timeout ends it. The workers belong to the run context
(`gradekit.core.context.current_run`): a run stops them when it ends; those of grades outside
any run stay warm until the interpreter exits.

Imports the core, the text kinds' helpers and, when grading, `gradekit.process.workers`.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import sys
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

import attrs

from gradekit.core.errors import OptionError
from gradekit.core.types import GradeResult, Sample
from gradekit.graders.results import (
    compared_texts,
    data_error,
    quote,
    timeout_seconds,
)

if TYPE_CHECKING:
    from gradekit.graders.math_check import Checked

__all__ = ["Math"]

MAX_FLOAT_ROUNDING: Final = 15
"""The most decimal places `float_rounding` may keep (a double holds about 15)."""

_LIBRARIES: Final = ("math_verify", "latex2sympy2_extended", "antlr4")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules: not importable
        return False


def _rounding(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not 0 <= value <= MAX_FLOAT_ROUNDING:
        raise OptionError(
            attribute.name,
            f"must be a whole number from 0 to {MAX_FLOAT_ROUNDING}, got {value!r}",
        )


@attrs.frozen
class Math:
    """Passes when the answer found in the output is mathematically equal to the expected one.

    `extract` says where the answer is: `auto` (a `\\boxed{}` answer, else the one after
    "final answer is" or "answer:", else the last expression in the text), `boxed` (the last
    `\\boxed{}` only), `last_number` (the last number, as `numeric` reads numbers) or `whole`
    (the whole output). Floats are compared rounded to `float_rounding` decimal places. An
    output with no answer to read fails; an expected value that does not parse is an error
    result naming the case. The check runs in a worker killed after `check_timeout` seconds.
    """

    kind: ClassVar[str] = "math"

    name: str = attrs.field(kw_only=True, default="math")
    extract: Literal["auto", "boxed", "last_number", "whole"] = attrs.field(
        kw_only=True, default="auto"
    )
    """Where the answer is in the output: auto, boxed, last_number or whole."""
    check_timeout: float = attrs.field(kw_only=True, default=5.0, validator=timeout_seconds)
    """Seconds one check may take; past it the check is killed and the grade fails."""
    float_rounding: int = attrs.field(kw_only=True, default=6, validator=_rounding)
    """Decimal places a decimal answer is compared to (0 to 15)."""

    def __attrs_post_init__(self) -> None:
        missing = [module for module in _LIBRARIES if not _installed(module)]
        if missing:
            raise OptionError(
                "kind",
                f"the math kind needs the math-verify library ({missing[0]} is missing); "
                "install it with pip install 'gradekit[math]'",
            )

    def grade(self, sample: Sample) -> GradeResult:
        """Find the answer in the output and compare it with the expected answer."""
        texts = compared_texts("math", self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        output, expected = texts
        checked = self._checked(output, expected)
        if isinstance(checked, GradeResult):
            return checked
        details = {"answer": checked.answer, "expected": checked.expected, "extract": self.extract}
        outcome = checked.outcome
        if outcome == "equal":
            message = f"answer {quote(checked.answer or '')} equals {quote(expected)}"
            return GradeResult("math", self.name, True, 1.0, message, details)
        if outcome == "different":
            message = f"expected {quote(expected)}, got {quote(checked.answer or '')}"
            return GradeResult("math", self.name, False, 0.0, message, details)
        if outcome == "no_answer":
            message = f"{checked.reason} (extract: {self.extract}): {quote(output)}"
            return GradeResult("math", self.name, False, 0.0, message, details)
        if outcome == "bad_expected":
            where = f"case {sample.case!r}" if sample.case is not None else "the sample"
            if sample.turn:
                where += f", turn {sample.turn}"
            return data_error(
                "math",
                self.name,
                f"the expected value {quote(expected)} of {where} is not a mathematical answer "
                f"({checked.reason}); write it as LaTeX, such as \\frac{{3}}{{4}}, or as a plain "
                "expression, such as 3/4",
            )
        return GradeResult.of_error("math", self.name, checked.reason)

    def _checked(self, output: str, expected: str) -> Checked | GradeResult:
        """`check` in a warm worker killed at `check_timeout`, or here where no child may
        start."""
        from gradekit.core.context import current_run
        from gradekit.graders import math_check

        if multiprocessing.current_process().daemon:
            return math_check.check(output, expected, self.extract, self.float_rounding)
        from gradekit.process.workers import (
            WorkerDied,
            WorkerSpec,
            WorkerStartError,
            WorkerTimeout,
            ask,
        )

        spec = WorkerSpec(math_check.work, None, tuple(sys.path))
        try:
            checked: Checked = ask(
                spec,
                self,
                lambda: (self.extract, self.float_rounding),
                (output, expected),
                seconds=self.check_timeout,
                owner=current_run(),  # a run's end stops them; else they stay warm
            )
        except WorkerTimeout:
            message = (
                f"the symbolic check did not end within {self.check_timeout:g}s: counted as "
                "not equal; raise check_timeout to give it longer"
            )
            details = {
                "answer": None,
                "expected": expected,
                "extract": self.extract,
                "timed_out": True,
            }
            return GradeResult("math", self.name, False, 0.0, message, details)
        except WorkerStartError as error:
            return GradeResult.of_error("math", self.name, error.cause)
        except WorkerDied as died:
            return GradeResult.of_error("math", self.name, f"ChildProcessError: {died}")
        return checked
