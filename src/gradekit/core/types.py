"""The core types every grader shares: `ToolCall`, `Sample`, `GradeResult`, the `Grader`
protocol and its abilities (`AsyncGrader`, `InlineGrader`, `BlockingGrader`,
`DeclaresOptions`); the immutable containers of sample data (`FrozenDict`, `freeze`, `thaw`),
so no grader can change what the next one sees; and the marks a built-in kind's `grade`
carries, promises the runner relies on (`well_formed`: its results need no checking again;
`bounded`: it always ends, in time its sample bounds; each an attribute of the function
itself, so a subclass that overrides `grade` carries none until it says so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Final,
    NoReturn,
    Protocol,
    TypeVar,
    runtime_checkable,
)

import attrs

if TYPE_CHECKING:
    import threading


__all__ = [
    "CANCEL_GRACE",
    "EMPTY",
    "AsyncGrader",
    "BlockingGrader",
    "DeclaresOptions",
    "FrozenDict",
    "GradeResult",
    "Grader",
    "InlineGrader",
    "Sample",
    "ToolCall",
    "as_text",
    "bounded",
    "error_text",
    "freeze",
    "is_bounded",
    "is_well_formed",
    "thaw",
    "well_formed",
]


K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A `dict` that refuses every change; picklable and JSON-serialisable like a dict."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "this mapping is read-only: graders may not change sample data; copy it with dict()"
        )

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


EMPTY: FrozenDict[Any, Any] = FrozenDict()


def freeze(value: Any) -> Any:
    """Return `value` with every dict made a FrozenDict and every list a tuple, recursively."""
    kind = type(value)
    if kind in _PLAIN:  # the usual cases first, before the ABC checks (a microsecond each)
        return value
    if kind is dict:
        for item in value.values():
            if type(item) not in _PLAIN:
                return FrozenDict({key: freeze(item) for key, item in value.items()})
        return FrozenDict(value)  # plain values (the usual arguments): one copy
    if kind is list or kind is tuple:
        return tuple([freeze(item) for item in value])
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(freeze(item) for item in value)
    return value


_PLAIN: Final = frozenset({str, int, float, bool, type(None)})


def thaw(value: Any) -> Any:
    """The inverse of `freeze`: plain dicts and lists, for JSON output and user code."""
    kind = type(value)
    # Exact types first: the ABC checks below cost about a microsecond each, and reports thaw
    # every result's details.
    if kind in _PLAIN:
        return value
    # Plain items are taken as they are, without a call each (details hold mostly texts).
    if kind is dict or kind is FrozenDict:
        return {key: item if type(item) in _PLAIN else thaw(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [item if type(item) in _PLAIN else thaw(item) for item in value]
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return [thaw(item) for item in value]
    return value


def frozen_tuple(values: Iterable[Any] | None) -> tuple[Any, ...]:
    """Freeze an optional iterable into a tuple (None becomes the empty tuple)."""
    return () if values is None else tuple(freeze(v) for v in values)


GradeFunction = TypeVar("GradeFunction", bound=Callable[..., Any])

_WELL_FORMED: Final = "_gradekit_well_formed"


def well_formed(grade: GradeFunction) -> GradeFunction:
    """Mark a `grade` method that always returns a well-formed result: exactly a `GradeResult`,
    `passed` a bool, details strict JSON (strings, lists of strings), and its grader's `kind`
    and `name`. The batch runner then accepts such results without checking them again.

    The mark is on this function only: a subclass that overrides `grade` is checked again.
    For built-in kinds, whose promise a property test holds them to.
    """
    setattr(grade, _WELL_FORMED, True)
    return grade


def is_well_formed(grade: Callable[..., Any]) -> bool:
    """True when `grade` (a function or bound method) is marked by `well_formed`."""
    return getattr(grade, _WELL_FORMED, False) is True


_BOUNDED: Final = "_gradekit_bounded"


def bounded(grade: GradeFunction) -> GradeFunction:
    """Mark a `grade` method that always ends, in time bounded by its sample: pure Python or C
    work on the sample, no I/O, no waiting, no loop that the sample does not bound. The runner
    may then grade it where no other thread could abandon it (an inline batch graded in the
    event loop's own thread while nothing else is in flight): its timeout still holds, judged
    when it returns, as the batch does for a grade that held the GIL.

    The mark is on this function only, as `well_formed`'s. For built-in kinds."""
    setattr(grade, _BOUNDED, True)
    return grade


def is_bounded(grade: Callable[..., Any]) -> bool:
    """True when `grade` (a function or bound method) is marked by `bounded`."""
    return getattr(grade, _BOUNDED, False) is True


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


@attrs.frozen
class Sample:
    """One thing to grade, usually one turn of a case.

    Immutable all the way down: `input`, `output`, `expected` and `context` are frozen (dicts
    read-only, lists tuples), each tool call is a ToolCall (given as one or as a mapping with
    its keys), and `metadata` a read-only mapping, so graders cannot change what the next
    grader sees. Values frozen already (the suite loader's) are kept as they are.
    """

    case: str = ""
    turn: int = 0
    input: Any = attrs.field(default=None, converter=freeze)
    output: Any = attrs.field(default=None, converter=freeze)
    expected: Any = attrs.field(default=None, converter=freeze)
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_tool_calls)
    context: tuple[Any, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    history: tuple[Sample, ...] = attrs.field(default=(), converter=_history)
    workspace: str | None = None
    metadata: FrozenDict[str, Any] = attrs.field(default=EMPTY, converter=_frozen_mapping)


def _score(value: Any) -> float:
    # One comparison chain rejects NaN (all comparisons false), infinities and out-of-range.
    if type(value) is float and 0.0 <= value <= 1.0:  # the usual case, first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"score must be a number in [0, 1], got {value!r} ({type(value).__name__})")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"score must be a finite number in [0, 1], got {value!r}")
    return float(value)


@attrs.frozen
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
    `gradekit.registry.registry`.
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
    the common keys `threshold` and `timeout` to a kind that takes them). A factory whose
    options class declares every option it takes says so with `options_complete = True`: the
    schema then refuses other keys, as it does for a kind whose factory is the attrs class."""

    options_class: type
