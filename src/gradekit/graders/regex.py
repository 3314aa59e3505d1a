"""The `regex` kind: the output matches a regular expression (Python `re` syntax, matched by
the `regex` package under a time limit: see `gradekit.graders.patterns`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs

from gradekit.core.errors import OptionError, PatternTimeoutError
from gradekit.core.types import GradeResult, Sample, bounded, well_formed
from gradekit.graders.patterns import INVALID, Pattern
from gradekit.graders.results import QUOTE_LIMIT, output_not_text, quote, text_of

__all__ = ["Regex"]


@attrs.frozen
class Regex:
    """Passes when the pattern is found in the output (`full_match`: matches all of it).

    The pattern is compiled when the grader is created: an invalid pattern is a ConfigError
    then, never an error in the middle of a run. A match that backtracks past its time limit
    (`gradekit.graders.patterns`) is a PatternTimeoutError, the grade's error result; the
    match releases the GIL, so the runner's batches time it out at the grader's timeout too.
    """

    kind: ClassVar[str] = "regex"
    inline: ClassVar[bool] = True
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"pattern": r"\d+"},
        {"pattern": "^(yes|no)$", "case_insensitive": True, "full_match": True},
    )

    name: str = attrs.field(kw_only=True, default="regex")
    pattern: str = attrs.field(kw_only=True)
    case_insensitive: bool = attrs.field(kw_only=True, default=False)
    full_match: bool = attrs.field(kw_only=True, default=False)
    _match: Callable[[str], Any] = attrs.field(init=False, repr=False, eq=False)
    _groups: bool = attrs.field(init=False, repr=False, eq=False)
    _shown: str = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        try:
            compiled = Pattern(self.pattern, "pattern", ignore_case=self.case_insensitive)
        except OptionError as error:
            why = error.message.removeprefix(INVALID)
            raise OptionError(
                "pattern",
                f"invalid regular expression {self.pattern!r}: {why}; fix the pattern "
                "(Python re syntax)",
            ) from None
        match = compiled.fullmatch if self.full_match else compiled.search
        object.__setattr__(self, "_match", match)
        object.__setattr__(self, "_groups", compiled.groups > 0)
        shown = f"/{self.pattern}/" + ("i" if self.case_insensitive else "")
        object.__setattr__(self, "_shown", shown)

    @bounded
    @well_formed
    def grade(self, sample: Sample) -> GradeResult:
        """Search (or fully match) the pattern in the output text."""
        output = sample.output
        if type(output) is not str:
            output = text_of(output)
            if output is None:
                return output_not_text("regex", self.name, sample.output)
        try:
            match = self._match(output)
        except PatternTimeoutError as error:
            return GradeResult.of_error("regex", self.name, error)
        if match is None:
            if self.full_match:
                message = f"output {quote(output)} does not fully match {self._shown}"
            else:
                message = f"no match for {self._shown} in {quote(output)}"
            return GradeResult("regex", self.name, False, 0.0, message, {"match": None})
        found = match[0]
        shown = repr(found) if len(found) <= QUOTE_LIMIT else quote(found)
        if self.full_match:
            message = f"output {shown} fully matches {self._shown}"
        else:
            message = f"found {shown} matching {self._shown}"
        if self._groups:
            details = {"match": found, "groups": list(match.groups()), "named": match.groupdict()}
        else:
            details = {"match": found}
        return GradeResult("regex", self.name, True, 1.0, message, details)
