"""The core types every grader shares: ToolCall, Sample, GradeResult and the Grader protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol, runtime_checkable

import attrs

from gradekit._frozen import EMPTY, FrozenDict, freeze, frozen_tuple

if TYPE_CHECKING:
    import threading

__all__ = [
    "CANCEL_GRACE",
    "AsyncGrader",
    "BlockingGrader",
    "DeclaresOptions",
    "GradeResult",
    "Grader",
    "InlineGrader",
    "Sample",
    "ToolCall",
    "as_text",
    "error_text",
    "loaded_sample",
]


def _frozen_mapping(value: Mapping[str, Any] | None) -> FrozenDict[str, Any]:
    if type(value) is FrozenDict:  # frozen all the way down already
        return value
    if value is None:
        return EMPTY
    frozen = freeze(value)
    if not isinstance(frozen, FrozenDict):
        raise TypeError(f"expected a mapping, got {value!r} ({type(value).__name__})")
    return frozen


def _optional_tuple(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else frozen_tuple(value)


@attrs.frozen
class ToolCall:
    """One tool call an agent made: its name, arguments, result or error, and loop turn."""

    name: str
    arguments: FrozenDict[str, Any] = attrs.field(default=EMPTY, converter=_frozen_mapping)
    result: Any = attrs.field(default=None, converter=freeze)
    error: str | None = None
    turn: int | None = None

    @classmethod
    def from_value(cls, value: ToolCall | Mapping[str, Any]) -> ToolCall:
        """Accept a ToolCall or a mapping with the same keys."""
        if isinstance(value, ToolCall):
            return value
        return cls(**value)


def _tool_calls(values: Any) -> tuple[ToolCall, ...]:
    if type(values) is tuple:  # a tuple of ToolCalls (immutable already) is kept as it is
        for value in values:
            if type(value) is not ToolCall:
                break
        else:
            return values
    if values is None:
        return ()
    return tuple([ToolCall.from_value(value) for value in values])


def _history(values: Any) -> tuple[Sample, ...]:
    if type(values) is tuple:
        return values
    return () if values is None else tuple(values)


@attrs.frozen(init=False)
class Sample:
    """One thing to grade, usually one turn of a case.

    Immutable all the way down: mappings are read-only and sequences are tuples, so graders
    cannot change what the next grader sees.
    """

    case: str = ""
    turn: int = 0
    input: Any = None
    output: Any = None
    expected: Any = None
    tool_calls: tuple[ToolCall, ...] = ()
    context: tuple[Any, ...] | None = None
    history: tuple[Sample, ...] = ()
    workspace: str | None = None
    metadata: FrozenDict[str, Any] = EMPTY

    def __init__(  # noqa: PLR0917 - every field, in order, as attrs' own constructor takes them
        self,
        case: str = "",
        turn: int = 0,
        input: Any = None,
        output: Any = None,
        expected: Any = None,
        tool_calls: Any = (),
        context: Any = None,
        history: Any = (),
        workspace: str | None = None,
        metadata: Mapping[str, Any] | None = EMPTY,
    ) -> None:
        """Freeze `input`, `output`, `expected` and `context` (dicts read-only, lists tuples),
        make each tool call a ToolCall (from a mapping with its keys), and `metadata` a
        read-only mapping.

        Written by hand, not by attrs: a frozen slotted class's generated constructor sets each
        field through `object.__setattr__`, twice the cost of the slot's own setter, and a
        sample is made per turn (bench/RESULTS.md). The parameters are the fields' own (a test
        holds them so)."""
        _set_case(self, case)
        _set_turn(self, turn)
        _set_input(self, freeze(input))
        _set_output(self, freeze(output))
        _set_expected(self, freeze(expected))
        _set_tool_calls(self, _tool_calls(tool_calls))
        _set_context(self, _optional_tuple(context))
        _set_history(self, _history(history))
        _set_workspace(self, workspace)
        _set_metadata(self, _frozen_mapping(metadata))


# Each field's slot, in field order: what `Sample(...)` and `loaded_sample` write, once each.
(
    _set_case,
    _set_turn,
    _set_input,
    _set_output,
    _set_expected,
    _set_tool_calls,
    _set_context,
    _set_history,
    _set_workspace,
    _set_metadata,
) = (Sample.__dict__[field.name].__set__ for field in attrs.fields(Sample))


def loaded_sample(  # noqa: PLR0917 - every field of Sample, in order
    case: str,
    turn: int,
    input: Any,
    output: Any,
    expected: Any,
    tool_calls: tuple[ToolCall, ...],
    context: tuple[Any, ...] | None,
    history: tuple[Sample, ...],
    workspace: str | None,
    metadata: FrozenDict[str, Any],
) -> Sample:
    """A Sample from values already checked and frozen (`freeze`), as the suite loader has
    them: no converter runs again. Samples built by users go through `Sample(...)`, which
    freezes and converts everything it is given."""
    sample: Sample = object.__new__(Sample)
    _set_case(sample, case)
    _set_turn(sample, turn)
    _set_input(sample, input)
    _set_output(sample, output)
    _set_expected(sample, expected)
    _set_tool_calls(sample, tool_calls)
    _set_context(sample, context)
    _set_history(sample, history)
    _set_workspace(sample, workspace)
    _set_metadata(sample, metadata)
    return sample


def _score(value: Any) -> float:
    # One comparison chain rejects NaN (all comparisons false), infinities and out-of-range.
    if type(value) is float and 0.0 <= value <= 1.0:  # the usual case, first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"score must be a number in [0, 1], got {value!r} ({type(value).__name__})")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"score must be a finite number in [0, 1], got {value!r}")
    return float(value)


# Not slotted: attrs then builds a frozen instance by writing its __dict__ directly, about
# twice as fast as eight slot setattr calls, and one result is made per grade (bench/RESULTS.md).
@attrs.frozen(slots=False)
class GradeResult:
    """The uniform result of one grader on one sample.

    `score` is a finite float in [0, 1]. `error` is `"ExceptionClass: message"` when the grader
    could not grade; then `passed` is False and `score` is 0.0. `details` is JSON-safe.
    """

    kind: str
    name: str
    passed: bool
    score: float = attrs.field(converter=_score)
    message: str = ""
    details: Mapping[str, Any] | None = None
    error: str | None = None
    duration_ms: float = 0.0

    def __attrs_post_init__(self) -> None:
        if self.error is not None and (self.passed or self.score != 0.0):
            raise ValueError("an errored result must have passed=False and score=0.0")

    @property
    def outcome(self) -> str:
        """`"pass"`, `"fail"` or `"error"`: results are tri-state."""
        if self.error is not None:
            return "error"
        return "pass" if self.passed else "fail"

    @classmethod
    def of_error(
        cls,
        kind: str,
        name: str,
        error: BaseException | str,
        message: str = "",
        details: Mapping[str, Any] | None = None,
    ) -> GradeResult:
        """A result for a grader that could not grade: not a failure, an error."""
        text = error if isinstance(error, str) else error_text(error)
        return cls(kind, name, False, 0.0, message or text, details, text)


_new = object.__new__


def checked_result(  # noqa: PLR0917 - positional: called once per grade, kept cheap
    kind: str,
    name: str,
    passed: bool,
    score: float,
    message: str,
    details: Mapping[str, Any] | None = None,
) -> GradeResult:
    """A graded (not errored) result, equal to `GradeResult(kind, name, passed, score,
    message, details)`, built without re-validating what the caller checked.

    For the hot path of graders that compute `passed` as a bool and `score` as a float in
    [0, 1] themselves (the built-in text kinds): it fills the instance dict of this frozen,
    non-slotted class as attrs' own `__init__` does, without the score converter and the
    post-init check, which cost 40% more (bench/RESULTS.md). It sets every field, in field
    order (checked against `attrs.fields` when this module loads); a property test holds it
    equal to the constructor.
    """
    result: GradeResult = _new(GradeResult)
    values = result.__dict__
    values["kind"] = kind
    values["name"] = name
    values["passed"] = passed
    values["score"] = score
    values["message"] = message
    values["details"] = details
    values["error"] = None
    values["duration_ms"] = 0.0
    return result


def _check_the_builder() -> None:
    """`checked_result` sets every field of GradeResult, in order, to the constructor's
    values: a field added or changed later fails here, at import, not silently."""
    written = ("kind", "name", "passed", "score", "message", "details", "error", "duration_ms")
    fields = attrs.fields(GradeResult)
    defaults = {field.name: field.default for field in fields}
    if (
        tuple(field.name for field in fields) != written
        or defaults["error"] is not None
        or defaults["duration_ms"] != 0.0
    ):
        raise TypeError(
            "checked_result no longer matches GradeResult's fields; update it in gradekit._types"
        )


_check_the_builder()


def error_text(error: BaseException) -> str:
    """`"ExceptionClass: message"`, the form every error result uses."""
    message = str(error)
    name = type(error).__name__
    return f"{name}: {message}" if message else name


def as_text(value: Any) -> str:
    """The text of a YAML scalar: `42` is compared as `"42"`, `true` as `"true"`."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    try:
        return str(value)
    except ValueError:  # an integer past the digits `str` writes (sys.get_int_max_str_digits)
        if isinstance(value, int):
            from decimal import Decimal

            return str(Decimal(value))  # its every digit, which Decimal writes at any length
        raise


@runtime_checkable
class Grader(Protocol):
    """What every grader is: a `kind`, a `name`, and `grade(sample) -> GradeResult`.

    A grader may also have optional abilities: `async agrade(sample)` (AsyncGrader, below),
    `inline = True` (InlineGrader, below), a `grade` marked `well_formed` (above); a factory
    may declare its options (DeclaresOptions). They are detected in one place,
    `gradekit.registry.abilities`.
    """

    @property
    def kind(self) -> str:
        """The registered kind name, such as `numeric`."""
        ...

    @property
    def name(self) -> str:
        """This grader's name in reports (defaults to the kind)."""
        ...

    def grade(self, sample: Sample) -> GradeResult:
        """Grade one sample."""
        ...


@runtime_checkable
class AsyncGrader(Protocol):
    """The optional async ability: a grader that can be awaited instead of called."""

    @property
    def kind(self) -> str:
        """The registered kind name."""
        ...

    @property
    def name(self) -> str:
        """This grader's name in reports."""
        ...

    async def agrade(self, sample: Sample) -> GradeResult:
        """Grade one sample without blocking the event loop."""
        ...


@runtime_checkable
class InlineGrader(Grader, Protocol):
    """The optional inline ability: a grader that is pure, CPU-only and always fast sets the
    class attribute `inline = True`. The runner then calls it directly, in batches on one
    thread, instead of giving each grade a thread or a task; it may call it again on the same
    sample (after a timeout in its batch) and expects the same result."""

    inline: ClassVar[bool]


CANCEL_GRACE: Final = 1.0
"""Seconds a `grade_blocking` may take to return once its `cancel` is set: the runner abandons
the grade's thread after that (the case goes on with a timeout error), and the contract kit's
`blocking_agrees` rule holds graders to it."""


@runtime_checkable
class BlockingGrader(Grader, Protocol):
    """The optional blocking ability: a grader whose grade waits on commands it runs (the
    `program`, `build` and `lint` kinds) defines `grade_blocking(sample, cancel)`, its `grade`
    cut short when the `threading.Event` `cancel` is set (the command's process group killed,
    a result returned). The runner then grades cases whose graders all have it wholly in its
    worker threads, one after another, setting `cancel` at the grade's timeout and abandoning
    a grade that has not returned `CANCEL_GRACE` seconds later."""

    def grade_blocking(self, sample: Sample, cancel: threading.Event) -> GradeResult:
        """Grade one sample in this thread; return soon once `cancel` is set."""
        ...


@runtime_checkable
class DeclaresOptions(Protocol):
    """The optional ability of a factory that is not itself an attrs class: `options_class`,
    the attrs class whose fields are its kind's options (for the suite schema and for routing
    the common keys `threshold` and `timeout` to a kind that takes them)."""

    options_class: type
