"""The `contains` and `not_contains` kinds: which of some given values appear in the output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from gradekit.core.errors import OptionError
from gradekit.core.types import GradeResult, Sample, bounded, well_formed
from gradekit.graders.results import output_not_text, quote, text_of

__all__ = ["Contains", "NotContains"]


def _check_values(_: Any, attribute: attrs.Attribute[tuple[str, ...]], values: Any) -> None:
    if not values:
        raise OptionError(attribute.name, "give at least one value to look for")
    for index, value in enumerate(values):
        if value == "":
            raise OptionError(
                attribute.name,
                f"item {index} is an empty string, which every text contains; remove it",
            )


def _listed(values: tuple[str, ...]) -> str:
    """`'a', 'b', 'c'` for messages."""
    return ", ".join(quote(value) for value in values)


def _folded(values: tuple[str, ...], case_insensitive: bool) -> tuple[str, ...]:
    return tuple(value.casefold() for value in values) if case_insensitive else values


@attrs.frozen
class _Search:
    """The options both kinds share: the values to look for, and whether case matters."""

    values: tuple[str, ...] = attrs.field(kw_only=True, validator=_check_values)
    """The texts to look for (quote numbers: ["2023"])."""
    case_insensitive: bool = attrs.field(kw_only=True, default=False)
    """Compare casefolded texts."""
    _listed: str = attrs.field(init=False, repr=False, eq=False)
    _pairs: tuple[tuple[str, str], ...] = attrs.field(init=False, repr=False, eq=False)
    """Each value with the text searched for it (casefolded when case does not matter)."""

    def __attrs_post_init__(self) -> None:
        searched = _folded(self.values, self.case_insensitive)
        object.__setattr__(self, "_listed", _listed(self.values))
        object.__setattr__(self, "_pairs", tuple(zip(self.values, searched, strict=True)))


@attrs.frozen
class Contains(_Search):
    """Passes when the output contains the values: all of them (`mode: all`) or any one.

    With `mode: all` the score is the fraction of values found; with `mode: any` it is 1.0 or
    0.0. `case_insensitive` compares casefolded texts.
    """

    kind: ClassVar[str] = "contains"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"values": ["4"]},
        {"values": ["Paris", "France"], "mode": "any", "case_insensitive": True},
    )
    inline: ClassVar[bool] = True

    name: str = attrs.field(kw_only=True, default="contains")
    mode: Literal["all", "any"] = attrs.field(kw_only=True, default="all")
    """all: every value must be found (score: the fraction found); any: one is enough."""

    @bounded
    @well_formed
    def grade(self, sample: Sample) -> GradeResult:
        """Look for each value in the output text."""
        output = sample.output
        if type(output) is not str:
            output = text_of(output)
            if output is None:
                return output_not_text("contains", self.name, sample.output)
        text = output.casefold() if self.case_insensitive else output
        values = self.values
        if self.mode == "any":
            for value, searched in self._pairs:
                if searched in text:
                    message = f"found {quote(value)}"
                    return GradeResult(
                        "contains", self.name, True, 1.0, message, {"found": [value]}
                    )
            message = f"found none of {self._listed} in {quote(output)}"
            return GradeResult("contains", self.name, False, 0.0, message, {"found": []})
        missing = [value for value, searched in self._pairs if searched not in text]
        if not missing:
            message = "found all of " + self._listed
            return GradeResult("contains", self.name, True, 1.0, message, {"missing": []})
        found = len(values) - len(missing)
        listed = _listed(tuple(missing)) if found else self._listed  # the usual miss: all
        message = f"missing {listed} in {quote(output)} (found {found} of {len(values)})"
        details = {"missing": missing}
        return GradeResult("contains", self.name, False, found / len(values), message, details)


@attrs.frozen
class NotContains(_Search):
    """Passes when the output contains none of the values; `case_insensitive` casefolds."""

    kind: ClassVar[str] = "not_contains"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"values": ["error"]},
        {"values": ["TODO", "FIXME"], "case_insensitive": True},
    )
    inline: ClassVar[bool] = True

    name: str = attrs.field(kw_only=True, default="not_contains")

    @bounded
    @well_formed
    def grade(self, sample: Sample) -> GradeResult:
        """Look for each forbidden value in the output text."""
        output = sample.output
        if type(output) is not str:
            output = text_of(output)
            if output is None:
                return output_not_text("not_contains", self.name, sample.output)
        text = output.casefold() if self.case_insensitive else output
        found = [value for value, searched in self._pairs if searched in text]
        if not found:
            message = "found none of " + self._listed
            return GradeResult("not_contains", self.name, True, 1.0, message, {"found": []})
        message = f"found forbidden {_listed(tuple(found))} in {quote(output)}"
        return GradeResult("not_contains", self.name, False, 0.0, message, {"found": found})
