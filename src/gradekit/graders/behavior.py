"""The `behavior` kind: checks over the tool calls an agent made, each reported on its own.

`expected_calls` is compiled once when the grader is created, by `gradekit.graders.calls`
(argument matchers, each expected call's rules, how calls are matched to expected calls).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal

import attrs

from gradekit.core.errors import ConfigError, OptionError
from gradekit.core.types import (
    EMPTY,
    FrozenDict,
    GradeResult,
    Sample,
    ToolCall,
    bounded,
    freeze,
    well_formed,
)
from gradekit.graders.calls import (
    ExpectedCall,
    MatchMode,
    expected_calls,
    match_calls,
    tool_name_problem,
)
from gradekit.graders.results import Check, data_error, forms_result, rebuilt, validate_threshold

__all__ = ["Behavior"]


_CONSTRAINTS = (
    "required_tools",
    "forbidden_tools",
    "max_turns",
    "max_tool_calls",
    "min_calls",
    "max_calls",
    "order",
    "expected_calls",
)


_GLOB_CHARACTERS: Final = frozenset("*?[")

NameMatch = Callable[[str], object] | None
"""A tool-name pattern's compiled glob (its `match`), or None for a plain name."""


def _compiled(pattern: str) -> NameMatch:
    """None for a plain name (compared with ==), else the glob's compiled `match`.

    The same test as `fnmatch.fnmatchcase`, compiled once when the grader is made instead of
    looked up in fnmatch's cache for every name of every grade.
    """
    if _GLOB_CHARACTERS.isdisjoint(pattern):
        return None
    return re.compile(fnmatch.translate(pattern)).match


def _times(count: int) -> str:
    return "1 time" if count == 1 else f"{count} times"


def _non_negative(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    values = value.values() if isinstance(value, Mapping) else [value]
    for number in values:
        if number is not None and number < 0:
            raise OptionError(attribute.name, f"must be >= 0, got {number!r}")


def _tool_names(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """Every tool name of a list option, or every key of a per-tool map, is a name."""
    if isinstance(value, Mapping):
        places = [(attribute.name, name) for name in value]
    else:
        places = [(f"{attribute.name}[{index}]", name) for index, name in enumerate(value)]
    for where, name in places:
        problem = tool_name_problem(name)
        if problem is not None:
            raise OptionError(where, problem)


@attrs.frozen
class Behavior:
    """Checks the sample's tool calls (with `scope: case`, also those of earlier turns).

    Every listed constraint is one check; score = fraction of checks passed; passed = every
    check passed, or score >= `threshold` when set. A grader with no constraint is a
    ConfigError. Tool names match exactly or as case-sensitive globs (`mcp__github__*`).
    """

    kind: ClassVar[str] = "behavior"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"required_tools": ["search"]},
        {"forbidden_tools": ["delete"], "max_tool_calls": 3},
    )
    inline: ClassVar[bool] = True

    name: str = attrs.field(kw_only=True, default="behavior")
    required_tools: tuple[str, ...] = attrs.field(kw_only=True, default=(), validator=_tool_names)
    """Tools that must each be called at least once."""
    forbidden_tools: tuple[str, ...] = attrs.field(kw_only=True, default=(), validator=_tool_names)
    """Tools that must not be called."""
    max_turns: int | None = attrs.field(kw_only=True, default=None, validator=_non_negative)
    """The most turns allowed, up to and including the graded one."""
    max_tool_calls: int | None = attrs.field(kw_only=True, default=None, validator=_non_negative)
    """The most tool calls allowed in all."""
    min_calls: FrozenDict[str, int] = attrs.field(
        kw_only=True, default=EMPTY, converter=freeze, validator=[_tool_names, _non_negative]
    )
    """Per tool, the fewest calls allowed: `{search: 2}` = at least two."""
    max_calls: FrozenDict[str, int] = attrs.field(
        kw_only=True, default=EMPTY, converter=freeze, validator=[_tool_names, _non_negative]
    )
    """Per tool, the most calls allowed: `{search: 2}` = at most two."""
    order: tuple[str, ...] = attrs.field(kw_only=True, default=(), validator=_tool_names)
    """Tools that must be called in this order (other calls may come between)."""
    expected_calls: tuple[FrozenDict[str, Any], ...] = attrs.field(
        kw_only=True, default=(), converter=freeze
    )
    """Calls that must be made: `[{name, arguments}]`, arguments matched as given."""
    expected_calls_match: MatchMode = attrs.field(kw_only=True, default="each")
    """How calls are matched to `expected_calls`: each, any_order or in_order."""
    scope: Literal["turn", "case"] = attrs.field(kw_only=True, default="turn")
    """turn: this turn's tool calls; case: also those of the case's earlier turns."""
    threshold: float | None = attrs.field(kw_only=True, default=None, validator=validate_threshold)
    _expected: tuple[ExpectedCall, ...] = attrs.field(init=False, repr=False, eq=False)
    _globs: dict[str, NameMatch] = attrs.field(init=False, repr=False, eq=False)
    _required: tuple[tuple[str, str], ...] = attrs.field(init=False, repr=False, eq=False)
    """Each required tool's pattern with the label of its check."""
    _only_required: bool = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        if not any(getattr(self, option) not in (None, (), EMPTY) for option in _CONSTRAINTS):
            raise ConfigError(
                "a behavior grader with no constraint checks nothing; set at least one of "
                + ", ".join(_CONSTRAINTS)
            )
        if self.expected_calls_match != "each" and not self.expected_calls:
            raise OptionError(
                "expected_calls_match",
                "says how expected_calls are matched, and there are none; add expected_calls",
            )
        object.__setattr__(self, "_expected", expected_calls(self.expected_calls))
        patterns = {*self.required_tools, *self.forbidden_tools, *self.min_calls}
        patterns.update(self.max_calls, self.order)
        object.__setattr__(self, "_globs", {pattern: _compiled(pattern) for pattern in patterns})
        required = tuple((p, f"required tool {p}") for p in self.required_tools)
        object.__setattr__(self, "_required", required)
        others = [option for option in _CONSTRAINTS if option != "required_tools"]
        only = all(getattr(self, option) in (None, (), EMPTY) for option in others)
        object.__setattr__(self, "_only_required", only)

    def _matches(self, pattern: str, name: str) -> bool:
        """Exact name or glob (`mcp__github__*`), case-sensitive."""
        if name == pattern:
            return True
        match = self._globs[pattern]
        return match is not None and match(name) is not None

    def _count(self, pattern: str, names: list[str]) -> int:
        """How many of `names` the pattern matches."""
        match = self._globs[pattern]
        if match is None:
            return names.count(pattern)
        return sum(1 for name in names if name == pattern or match(name) is not None)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its options: the argument matchers are closures, rebuilt from them."""
        return rebuilt(self)

    @bounded
    @well_formed
    def grade(self, sample: Sample) -> GradeResult:
        """Check the tool calls in scope against every constraint."""
        calls = sample.tool_calls if self.scope == "turn" else self._calls(sample)
        names = [call.name for call in calls]
        for number, name in enumerate(names, 1):
            if not isinstance(name, str):  # its results are well formed: details list names
                return data_error(
                    "behavior",
                    self.name,
                    f"tool call #{number} has a name that is not text ({type(name).__name__} "
                    f"{name!r}); give each tool call its tool's name as text",
                )
        # The required tools' checks are built in their JSON form (Check.to_dict's) at once:
        # they are the usual constraint, and one Check object each costs a third of a grade.
        forms: list[dict[str, Any]] = []
        for pattern, label in self._required:
            count = self._count(pattern, names)
            if count:
                message = "called 1 time" if count == 1 else f"called {count} times"
                forms.append({"name": label, "passed": True, "message": message})
            else:
                forms.append({"name": label, "passed": False, "message": "never called"})
        if not self._only_required:
            checks: list[Check] = []
            self._other_checks(sample, calls, names, checks)
            forms.extend(check.to_dict() for check in checks)
        return forms_result(
            self.kind, self.name, forms, threshold=self.threshold, details={"tool_calls": names}
        )

    def _other_checks(
        self, sample: Sample, calls: Sequence[ToolCall], names: list[str], checks: list[Check]
    ) -> None:
        """Every constraint but `required_tools`, each adding its checks to `checks`."""
        for pattern in self.forbidden_tools:
            hits = sorted({name for name in names if self._matches(pattern, name)})
            message = "called: " + ", ".join(hits) if hits else "not called"
            checks.append(Check(f"forbidden tool {pattern}", not hits, message))
        if self.max_turns is not None:
            turns = self._turns(sample, calls)
            noun = "turn" if turns == 1 else "turns"
            message = f"{turns} {noun} (at most {self.max_turns})"
            checks.append(Check("max_turns", turns <= self.max_turns, message))
        if self.max_tool_calls is not None:
            ok = len(calls) <= self.max_tool_calls
            message = f"{len(calls)} tool calls (at most {self.max_tool_calls})"
            checks.append(Check("max_tool_calls", ok, message))
        if self.min_calls:
            for pattern, bound in self.min_calls.items():
                count = self._count(pattern, names)
                message = f"called {_times(count)} (at least {bound})"
                checks.append(Check(f"min_calls {pattern}", count >= bound, message))
        if self.max_calls:
            for pattern, bound in self.max_calls.items():
                count = self._count(pattern, names)
                message = f"called {_times(count)} (at most {bound})"
                checks.append(Check(f"max_calls {pattern}", count <= bound, message))
        if self.order:
            checks.append(self._order_check(names))
        if self._expected:
            checks.extend(match_calls(self._expected, calls, self.expected_calls_match))

    def _calls(self, sample: Sample) -> list[ToolCall]:
        """The calls of `scope: case`: earlier turns' and this one's."""
        earlier = [call for turn in sample.history for call in turn.tool_calls]
        return [*earlier, *sample.tool_calls]

    @staticmethod
    def _turns(sample: Sample, calls: Sequence[ToolCall]) -> int:
        """The turns up to and including the graded one. Turns are numbered from 0 (like
        `Sample.turn` and the `turn` transcripts record on tool calls), so the count is the
        highest number + 1: of a recorded `turn` on a call in scope, or of the sample's place
        in its case."""
        recorded = [
            call.turn
            for call in calls
            if isinstance(call.turn, int) and not isinstance(call.turn, bool)
        ]
        return max([sample.turn, len(sample.history), *recorded]) + 1

    def _order_check(self, names: list[str]) -> Check:
        step = 0
        for name in names:
            if step < len(self.order) and self._matches(self.order[step], name):
                step += 1
        wanted = " -> ".join(self.order)
        if step == len(self.order):
            return Check("order", True, f"called in order: {wanted}")
        missing = self.order[step]
        if step == 0:
            message = f"'{missing}' never called (wanted {wanted})"
        else:
            message = f"'{missing}' not called after '{self.order[step - 1]}' (wanted {wanted})"
        return Check("order", False, message)
