"""The `code` kind: a user-written Python callable, referenced as `"module:callable"`.

The reference is resolved when the grader is created (at suite load), never while grading:
the module is imported once with `importlib.import_module` and the callable found with
`getattr`; nothing here executes text as code. Every failure is an `OptionError` on `grader`,
which the suite loader reports as a ConfigError with the file, line, case and turn.

The folder of the suite file being loaded is put at the front of `sys.path` while importing,
so a `graders.py` beside the suite just works. It is left on `sys.path` afterwards, so imports
the user module makes later (inside a grader function) still find its sibling modules, as when
running a script from that folder.

How the value a code grader returns becomes a GradeResult (`to_grade_result`, the table in
docs/code-graders.md): `True` / `False` -> score 1.0 / 0.0, passed / failed; an int or float
-> that score, passed derived; a `GraderResult` -> used as is. Anything else, a score that is
NaN or outside [0, 1], or details that are not strict JSON give an error result: never a
clamp, never a guess.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import threading
import time
import types
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, ClassVar

import attrs

from gradekit.code import GraderContext, GraderResult
from gradekit.core.context import current_place, current_suite_dir, suite_dir
from gradekit.core.errors import OptionError, did_you_mean
from gradekit.core.types import GradeResult, Sample, error_text, freeze
from gradekit.core.values import JsonProblem, find_json_problem, fraction_problem

__all__ = ["Code", "details_problem", "to_grade_result", "type_name"]


_EXPECTED = "return True/False, a number in [0, 1] or a gradekit.code.GraderResult"
_JSON_TYPES = "use only dict (with str keys), list, str, int, float, bool and None"


def to_grade_result(
    value: Any, kind: str, name: str, reference: str, threshold: float | None
) -> GradeResult:
    """Map what the grader `reference` returned to a GradeResult (see the module docstring)."""
    if isinstance(value, bool):
        return GradeResult(kind, name, value, 1.0 if value else 0.0, f"returned {value}")
    if isinstance(value, (int, float)):
        problem = _score_problem(value, reference)
        if problem is not None:
            return GradeResult.of_error(kind, name, problem)
        return GradeResult(kind, name, *_derive(float(value), None, threshold))
    if not isinstance(value, GraderResult):
        return GradeResult.of_error(
            kind, name, f"TypeError: grader {reference!r} returned {type_name(value)}; {_EXPECTED}"
        )
    score = value.score
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return GradeResult.of_error(
            kind,
            name,
            f"TypeError: grader {reference!r} returned a GraderResult whose score is "
            f"{type_name(score)}; the score must be a number in [0, 1]",
        )
    problem = _score_problem(score, reference)
    if problem is None and value.passed is not None and not isinstance(value.passed, bool):
        problem = (
            f"TypeError: grader {reference!r} returned a GraderResult whose passed is "
            f"{type_name(value.passed)}; use True, False or None"
        )
    if problem is None and value.reason is not None and not isinstance(value.reason, str):
        problem = (
            f"TypeError: grader {reference!r} returned a GraderResult whose reason is "
            f"{type_name(value.reason)}; use a str or None"
        )
    if problem is None and value.details is not None:
        problem = details_problem(value.details)
    if problem is not None:
        return GradeResult.of_error(kind, name, problem)
    passed, score, message = _derive(float(score), value.passed, threshold)
    details = None if value.details is None else freeze(value.details)
    return GradeResult(kind, name, passed, score, value.reason or message, details)


def _derive(score: float, passed: bool | None, threshold: float | None) -> tuple[bool, float, str]:
    """(passed, score, message): explicit `passed` wins, else score >= threshold (or 0.5)."""
    if passed is not None:
        return passed, score, f"score {score:g}, passed={passed} as returned"
    bar = 0.5 if threshold is None else threshold
    label = "threshold" if threshold is not None else "default threshold"
    if score >= bar:
        return True, score, f"score {score:g} >= {label} {bar:g}"
    return False, score, f"score {score:g} < {label} {bar:g}"


def _score_problem(score: float, reference: str) -> str | None:
    if 0.0 <= score <= 1.0:  # False for NaN and infinities too
        return None
    return (
        f"ValueError: grader {reference!r} returned score {score!r}, which is not a finite "
        "number in [0, 1]; scores are never clamped: return a score in [0, 1]"
    )


def details_problem(details: Any) -> str | None:
    """Why `details` is not a dict of strict JSON values, as an error text; None when it is."""
    if not isinstance(details, dict):
        return (
            f"TypeError: details are not JSON-serialisable: details must be a dict, "
            f"got {type_name(details)}; {_JSON_TYPES}"
        )
    try:
        problem = find_json_problem(details)
    except RecursionError:
        return "ValueError: details are not JSON-serialisable: they are nested too deeply"
    return None if problem is None else _describe(problem)


def _describe(problem: JsonProblem) -> str:
    prefix = "details are not JSON-serialisable"
    path = "details" + "".join(f"[{part!r}]" for part in problem.path)
    if problem.reason == "nonfinite":
        return f"ValueError: {prefix}: {path} is {problem.value!r}; JSON has no NaN or infinity"
    if problem.reason == "cycle":
        return f"ValueError: {prefix}: {path} refers back to a containing value (a cycle)"
    if problem.reason == "key":
        key = problem.value
        return (
            f"TypeError: {prefix}: {path} has the key {key!r} ({type(key).__name__});"
            " JSON object keys must be strings"
        )
    return f"TypeError: {prefix}: {path} is {type_name(problem.value)}; {_JSON_TYPES}"


def type_name(value: Any) -> str:
    """`a dict`, `an int`, `None`: how error texts name what was returned."""
    if value is None:
        return "None"
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"


_PATH_LOCK = threading.Lock()


def _threshold(_: Any, __: Any, value: float | None) -> None:
    problem = None if value is None else fraction_problem(value)
    if problem is not None:
        raise OptionError("threshold", problem)


class _AsyncOnly:
    """The `agrade` attribute of a Code grader, which exists only for an `async def` callable.

    The runner awaits a grader that has `agrade` on its event loop and runs one that has not
    on its worker pool (where a hung function is abandoned at its timeout). A plain function
    must go to the pool: awaited on the loop it would block every other grade.
    """

    def __get__(
        self, grader: Code | None, owner: type[Code]
    ) -> Callable[[Sample], Coroutine[Any, Any, GradeResult]]:
        if grader is None:
            return Code._agrade  # type: ignore[return-value]
        if not grader._is_async:
            raise AttributeError(
                f"code grader {grader.grader!r} is a plain function: it has no agrade; call grade()"
            )
        return types.MethodType(Code._agrade, grader)


def _is_async(target: Any) -> bool:
    # Also an instance whose class defines `async def __call__`.
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(type(target).__call__)


@attrs.frozen
class Code:
    """Grades with the user callable named by `grader` (`"pkg.mod:fn"` or `"pkg.mod:Class.fn"`).

    `threshold` decides `passed` for a bare number (`score >= threshold`; 0.5 when unset).
    `name` defaults to the callable's name as written in `grader`: the registry gives a
    nameless entry the kind's name, `code`, and that default is replaced.
    """

    kind: ClassVar[str] = "code"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = ({"grader": "operator:truth"},)

    name: str = attrs.field(kw_only=True, default="code")
    grader: str = attrs.field(kw_only=True)
    """The callable that grades: "pkg.mod:fn" or "pkg.mod:Class.method"."""
    threshold: float | None = attrs.field(kw_only=True, default=None, validator=_threshold)
    _callable: Callable[..., Any] = attrs.field(init=False, repr=False, eq=False)
    _is_async: bool = attrs.field(init=False, repr=False, eq=False)
    _suite_dir: Path | None = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        try:
            target = resolve(self.grader)
        except OptionError as error:
            where = current_place()
            if where is None:
                raise
            # Name the case and turn: the file position alone does not say which case it is.
            raise OptionError(error.field, f"{where}: {error.message}") from error.__cause__
        object.__setattr__(self, "_callable", target)
        object.__setattr__(self, "_is_async", _is_async(target))
        object.__setattr__(self, "_suite_dir", current_suite_dir())
        if self.name == self.kind:
            object.__setattr__(self, "name", self.grader.partition(":")[2].rpartition(".")[2])

    agrade = _AsyncOnly()
    """`await grader.agrade(sample)`: present only when the callable is `async def`."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt by resolving again (in a process worker: with the suite folder on the path).
        return (_rebuild, (self.grader, self.threshold, self.name, self._suite_dir))

    def grade(self, sample: Sample) -> GradeResult:
        """Call the grader (running it to completion when it is `async def`)."""
        start = time.perf_counter()
        try:
            value = self._callable(GraderContext.from_sample(sample))
            if inspect.isawaitable(value):
                value = _run_coroutine(_awaited(value))
        except (Exception, SystemExit) as error:
            return self._error(error, start)
        return self._result(value, start)

    async def _agrade(self, sample: Sample) -> GradeResult:
        start = time.perf_counter()
        try:
            value = await self._callable(GraderContext.from_sample(sample))
        except (Exception, SystemExit) as error:
            return self._error(error, start)
        return self._result(value, start)

    def _error(self, error: BaseException, start: float) -> GradeResult:
        return _timed(GradeResult.of_error(self.kind, self.name, error), start)

    def _result(self, value: Any, start: float) -> GradeResult:
        result = to_grade_result(value, self.kind, self.name, self.grader, self.threshold)
        return _timed(result, start)


def _rebuild(grader: str, threshold: float | None, name: str, folder: Path | None) -> Code:
    with suite_dir(folder):
        return Code(grader=grader, threshold=threshold, name=name)


def _timed(result: GradeResult, start: float) -> GradeResult:
    # A copy with the duration: results are frozen (the cost is nothing beside a call to
    # user code on a worker thread).
    return attrs.evolve(result, duration_ms=(time.perf_counter() - start) * 1000.0)


async def _awaited(value: Any) -> Any:
    return await value


def _run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """`asyncio.run`, also from a thread whose event loop is running (then on a new thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: list[Any] = []

    def target() -> None:
        try:
            box.append((True, asyncio.run(coroutine)))
        except BaseException as error:
            box.append((False, error))

    thread = threading.Thread(target=target, name="gradekit-code-grader")
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


# -- resolution ----------------------------------------------------------------------------


def _parse(reference: str) -> tuple[str, list[str]]:
    example = "; write 'module:function', e.g. 'my_benchmarks:numeric_equal'"
    if reference.count(":") != 1:
        raise OptionError(
            "grader",
            f"invalid grader reference {reference!r}: expected exactly one ':' between the "
            f"module and the callable{example}",
        )
    module, _, attribute = reference.partition(":")
    if not all(part.isidentifier() for part in module.split(".")):
        raise OptionError(
            "grader",
            f"invalid grader reference {reference!r}: {module!r} is not a dotted module "
            f"name{example}",
        )
    parts = attribute.split(".")
    if len(parts) > 2 or not all(part.isidentifier() for part in parts):
        raise OptionError(
            "grader",
            f"invalid grader reference {reference!r}: {attribute!r} is not a callable name "
            "(an identifier, or Class.method)" + example,
        )
    return module, parts


def _import(reference: str, name: str) -> types.ModuleType:
    folder = current_suite_dir()
    if folder is not None:
        _check_shadowed(reference, name, folder)
        with _PATH_LOCK:
            if str(folder) not in sys.path:
                sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and (name == error.name or name.startswith(error.name + ".")):
            where = f"beside the suite file ({folder}) or " if folder is not None else ""
            raise OptionError(
                "grader",
                f"cannot resolve grader {reference!r}: module {name!r} was not found "
                f"({error_text(error)}); put it {where}on the Python path, or fix the name",
            ) from error
        raise _import_failed(reference, name, error) from error
    except (Exception, SystemExit) as error:
        raise _import_failed(reference, name, error) from error


def _import_failed(reference: str, name: str, error: BaseException) -> OptionError:
    return OptionError(
        "grader",
        f"cannot resolve grader {reference!r}: importing module {name!r} failed "
        f"({error_text(error)}); fix the error in that module",
    )


def _check_shadowed(reference: str, name: str, folder: Path) -> None:
    """Module names are global to a process: never take another suite's `graders` silently."""
    top = name.partition(".")[0]
    loaded = sys.modules.get(top)
    local = folder / f"{top}.py", folder / top / "__init__.py"
    if loaded is None or not any(path.is_file() for path in local):
        return
    origin = getattr(loaded, "__file__", None)
    if origin is None or Path(origin).resolve() not in {path.resolve() for path in local}:
        raise OptionError(
            "grader",
            f"cannot resolve grader {reference!r}: module {top!r} is already imported from "
            f"{origin or 'elsewhere'}, not from the suite folder {folder}; module names are "
            "shared by the whole process, so give the suite's module a unique name",
        )


def resolve(reference: str) -> Callable[..., Any]:
    """The callable `reference` names, importing its module; raises OptionError on `grader`."""
    if not isinstance(reference, str):
        raise OptionError("grader", f"expected a 'module:callable' string, got {reference!r}")
    module_name, parts = _parse(reference)
    target: Any = _import(reference, module_name)
    for index, part in enumerate(parts):
        owner = f"module {module_name!r}" if index == 0 else f"'{module_name}:{parts[0]}'"

        try:
            target = getattr(target, part)
        except AttributeError as error:
            hint = did_you_mean(part, [n for n in dir(target) if not n.startswith("_")])
            suggestion = f"{hint} " if hint else ""
            raise OptionError(
                "grader",
                f"cannot resolve grader {reference!r}: {owner} has no attribute {part!r} "
                f"({error_text(error)}); {suggestion}check the name after the ':'",
            ) from error
    if not callable(target):
        kind = type(target).__name__
        raise OptionError(
            "grader",
            f"cannot resolve grader {reference!r}: it names {type_name(target)}, which is not "
            f"callable (TypeError: '{kind}' object is not callable); point it at a function",
        )
    return target  # type: ignore[no-any-return]
