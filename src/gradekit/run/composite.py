"""The composite kinds: `all`, `any`, `at_least`, `weighted` and `not` combine child graders.

Each child is a full grader entry (its own `weight`, `advisory`, `threshold`, `timeout`,
`isolation`...), built by the same `build_entry` as a top-level entry, so composites nest.
Children run concurrently, each under its own timeout; the verdict follows the rules of
`gradekit.run.verdict` (the ones the runner uses for turns). The children's results are listed in
`details.results`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs

from gradekit.core.coroutines import run_sync
from gradekit.core.errors import ConfigError, Problem, hint_suffix
from gradekit.core.types import GradeResult, Sample
from gradekit.core.values import fraction_problem
from gradekit.registry.entries import GraderEntry, build_entry
from gradekit.registry.options import option_fields
from gradekit.registry.registry import Registry, is_grader
from gradekit.report.model import ResultRecord
from gradekit.run.dispatch import entry_of, is_inline, run_entry
from gradekit.run.settings import current_context
from gradekit.run.verdict import Verdict, call_sync, combine, negate

__all__ = ["AllOf", "AnyOf", "AtLeast", "Not", "Weighted"]


# The `graders` option of every composite: required, at least one grader entry.
_GRADERS: Final = {
    "help": "The child grader entries, each with its own kind and options.",
    "schema": {"minItems": 1},
}


@attrs.frozen
class CompositeOptions:
    """The options of `all` and `any`: the child graders."""

    name: str = attrs.field(kw_only=True, default="")
    graders: list[Mapping[str, Any]] = attrs.field(kw_only=True, metadata=_GRADERS)


@attrs.frozen
class AtLeastOptions:
    """The options of `at_least`: the child graders and how many must pass."""

    name: str = attrs.field(kw_only=True, default="at_least")
    count: int = attrs.field(
        kw_only=True,
        metadata={
            "help": "How many non-advisory children must pass (1 to their number).",
            "schema": {"minimum": 1},
        },
    )
    graders: list[Mapping[str, Any]] = attrs.field(kw_only=True, metadata=_GRADERS)


@attrs.frozen
class WeightedOptions:
    """The options of `weighted`: the child graders and the threshold (declared so that the
    common `threshold` key of its entry goes to the kind, not to the runner)."""

    name: str = attrs.field(kw_only=True, default="weighted")
    threshold: float = attrs.field(
        kw_only=True,
        metadata={"help": "The weighted mean score of the children that passes, from 0 to 1."},
    )
    graders: list[Mapping[str, Any]] = attrs.field(kw_only=True, metadata=_GRADERS)


@attrs.frozen
class NotOptions:
    """The options of `not`: its one child grader."""

    name: str = attrs.field(kw_only=True, default="not")
    graders: list[Mapping[str, Any]] = attrs.field(
        kw_only=True,
        metadata={
            "help": "The one grader entry to negate (wrap several in an 'all' or 'any').",
            "schema": {"minItems": 1, "maxItems": 1},
        },
    )


class _Composite:
    """Shared by every composite kind: child entries from `graders: [...]`, run concurrently."""

    kind: ClassVar[str]
    mode: ClassVar[str] = "all"
    options_class: ClassVar[type] = CompositeOptions
    # Every option a composite takes is a field of its options class (the schema refuses others).
    options_complete: ClassVar[bool] = True

    def __init__(
        self, name: str | None = None, config: Mapping[str, Any] | None = None, **options: Any
    ) -> None:
        """Create from a config mapping (`{"graders": [...], ...}`, as in YAML) or from
        keyword options; `graders` may also hold grader objects or GraderEntry objects."""
        from gradekit.registry.registry import creating_registry

        config = {**(config or {}), **options}
        self.name = self.kind if name is None else name
        problems: list[Problem] = []
        known = [field.name for field in option_fields(self.options_class)]
        for key in config:
            if key not in known:
                suffix = hint_suffix(str(key), known)
                message = f"unknown option '{key}' for kind '{self.kind}'{suffix}"
                problems.append(Problem((str(key),), message, key=True))
        self.children = _children(config.get("graders"), creating_registry(), problems)
        self._configure(config, problems)
        if problems:
            raise ConfigError(f"invalid options for kind '{self.kind}'", problems)
        # Inline when every child is: then `grade` calls them right here, under the timeout
        # of whoever calls the composite (see `is_inline`).
        self.inline = all(is_inline(child) for child in self.children)

    def _configure(self, config: Mapping[str, Any], problems: list[Problem]) -> None:
        """Read the kind's own options (none by default)."""

    def _verdict(self, records: Sequence[ResultRecord]) -> Verdict:
        return combine(_results(records), self.children, self.mode)

    def _summary(self, records: Sequence[ResultRecord], verdict: Verdict) -> str:
        counted = [r for r in records if not r.advisory]
        passed = sum(1 for r in counted if r.result.outcome == "pass")
        return f"{self.kind}: {passed} of {len(counted)} graders passed"

    def __repr__(self) -> str:
        names = ", ".join(child.name for child in self.children)
        return f"{type(self).__name__}(name={self.name!r}, graders=[{names}])"

    def grade(self, sample: Sample) -> GradeResult:
        """Grade with every child; inline children are called right here."""
        if self.inline:
            return self._combined([call_sync(child, sample) for child in self.children])
        return run_sync(lambda: self.agrade(sample))

    async def agrade(self, sample: Sample) -> GradeResult:
        """Grade with every child concurrently, each under its own timeout."""
        import asyncio

        context = current_context()
        records = await asyncio.gather(
            *(run_entry(child, sample, context) for child in self.children)
        )
        return self._combined(records)

    def _combined(self, records: Sequence[ResultRecord]) -> GradeResult:
        """The composite's result from its children's records (in the children's order)."""
        verdict = self._verdict(records)
        details = {"results": [record.to_dict() for record in records]}
        if verdict.outcome == "error":
            errored = "; ".join(
                f"'{r.result.name}' ({r.result.error})"
                for r in records
                if r.result.error is not None and not r.advisory
            )
            text = f"ChildError: the verdict of '{self.name}' depends on errored graders: {errored}"
            return GradeResult.of_error(self.kind, self.name, text, details=details)
        return GradeResult(
            self.kind,
            self.name,
            verdict.passed,
            verdict.score_or_default(),
            self._summary(records, verdict),
            details,
        )


def _children(raw: Any, registry: Registry, problems: list[Problem]) -> tuple[GraderEntry, ...]:
    empty = "a composite needs at least one grader; list its children under 'graders:'"
    if raw is None:
        problems.append(Problem(("graders",), empty))
        return ()
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        problems.append(Problem(("graders",), f"expected a list of grader entries, got {raw!r}"))
        return ()
    children: list[GraderEntry] = []
    for index, item in enumerate(raw):
        if (isinstance(item, GraderEntry) or is_grader(item)) and not isinstance(item, Mapping):
            children.append(entry_of(item))
            continue
        try:
            entry = build_entry(item, registry=registry)
        except ConfigError as error:
            problems.extend(error.problems_under("graders", index))
            continue
        if entry is not None:
            children.append(entry)
    if not children and not problems:
        problems.append(Problem(("graders",), empty))
    return tuple(children)


def _results(records: Sequence[ResultRecord]) -> list[GradeResult]:
    return [record.result for record in records]


def _counted(children: Sequence[GraderEntry]) -> int:
    return sum(1 for child in children if not child.advisory)


class AllOf(_Composite):
    """`all`: passes when every (non-advisory) child passes."""

    kind: ClassVar[str] = "all"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"graders": [{"kind": "equality"}, {"kind": "contains", "values": ["4"]}]},
    )
    mode: ClassVar[str] = "all"


class AnyOf(_Composite):
    """`any`: passes when at least one child passes (errored children are then moot)."""

    kind: ClassVar[str] = "any"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"graders": [{"kind": "equality"}, {"kind": "regex", "pattern": "4"}]},
    )
    mode: ClassVar[str] = "any"


class AtLeast(_Composite):
    """`at_least`: passes when at least `count` children pass (`count` is required)."""

    kind: ClassVar[str] = "at_least"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"count": 1, "graders": [{"kind": "equality"}, {"kind": "contains", "values": ["4"]}]},
    )
    mode: ClassVar[str] = "at_least"
    options_class: ClassVar[type] = AtLeastOptions
    count: int

    def _configure(self, config: Mapping[str, Any], problems: list[Problem]) -> None:
        count = config.get("count")
        self.count = 1
        counted = _counted(self.children)
        if count is None:
            problems.append(Problem(("count",), "this option is required; add count: 2"))
        elif isinstance(count, bool) or not isinstance(count, int):
            problems.append(Problem(("count",), f"expected a whole number, got {count!r}"))
        elif self.children and not 1 <= count <= counted:
            problems.append(
                Problem(
                    ("count",),
                    f"must be between 1 and the number of non-advisory graders ({counted}), "
                    f"got {count}",
                )
            )
        else:
            self.count = count

    def _verdict(self, records: Sequence[ResultRecord]) -> Verdict:
        return combine(_results(records), self.children, "at_least", count=self.count)

    def _summary(self, records: Sequence[ResultRecord], verdict: Verdict) -> str:
        counted = [r for r in records if not r.advisory]
        passed = sum(1 for r in counted if r.result.outcome == "pass")
        return f"at_least: {passed} of {len(counted)} graders passed, {self.count} needed"


class Weighted(_Composite):
    """`weighted`: passes when the children's weighted mean score is >= `threshold`."""

    kind: ClassVar[str] = "weighted"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {
            "threshold": 0.5,
            "graders": [{"kind": "equality", "weight": 2}, {"kind": "contains", "values": ["4"]}],
        },
    )
    mode: ClassVar[str] = "weighted"
    options_class: ClassVar[type] = WeightedOptions
    threshold: float

    def _configure(self, config: Mapping[str, Any], problems: list[Problem]) -> None:
        threshold = config.get("threshold")
        self.threshold = 0.5
        if threshold is None:
            problems.append(
                Problem(("threshold",), "'weighted' needs a threshold; add threshold: 0.8")
            )
        elif isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            problems.append(
                Problem(("threshold",), f"expected a number from 0 to 1, got {threshold!r}")
            )
        elif (problem := fraction_problem(threshold)) is not None:
            problems.append(Problem(("threshold",), problem))
        else:
            self.threshold = float(threshold)

    def _verdict(self, records: Sequence[ResultRecord]) -> Verdict:
        return combine(_results(records), self.children, "weighted", threshold=self.threshold)

    def _summary(self, records: Sequence[ResultRecord], verdict: Verdict) -> str:
        score = verdict.score_or_default()
        return f"weighted: score {score:.3g} against threshold {self.threshold:g}"


class Not(_Composite):
    """`not`: passes when its one child fails, fails when it passes; an error stays an error."""

    kind: ClassVar[str] = "not"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"graders": [{"kind": "contains", "values": ["error"]}]},
    )
    options_class: ClassVar[type] = NotOptions

    def _configure(self, config: Mapping[str, Any], problems: list[Problem]) -> None:
        if len(self.children) > 1:
            problems.append(
                Problem(
                    ("graders",),
                    f"'not' takes exactly one grader, got {len(self.children)}; "
                    "wrap several in an 'all' or 'any' first",
                )
            )
        elif self.children and self.children[0].advisory:
            problems.append(
                Problem(
                    ("graders", 0, "advisory"),
                    "the grader of 'not' cannot be advisory: there would be nothing to negate",
                )
            )

    def _verdict(self, records: Sequence[ResultRecord]) -> Verdict:
        return negate(combine(_results(records), self.children, "all"))

    def _summary(self, records: Sequence[ResultRecord], verdict: Verdict) -> str:
        child = records[0].result
        return f"not: '{child.name}' {'failed' if child.outcome == 'fail' else 'passed'}"
