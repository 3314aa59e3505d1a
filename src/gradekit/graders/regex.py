"""The `regex` kind: the output matches a regular expression (Python `re` syntax, matched by
the `regex` package under a time limit: see `gradekit.graders.patterns`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs

from gradekit.core.errors import OptionError, PatternTimeoutError
from gradekit.core.types import GradeResult, Sample, bounded, well_formed
from gradekit.graders.patterns import INVALID, Pattern
from gradekit.graders.results import QUOTE_LIMIT, compared_texts, output_not_text, quote, text_of

__all__ = ["Regex"]


@attrs.frozen
class Regex:
    """Passes when the pattern is found in the output (`full_match`: matches all of it) and,
    with `group` (a group's number or name), the text that group captured equals `expected`
    (ignoring case with `case_insensitive`).

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
        {"pattern": r"ANSWER: (?P<letter>[A-D])", "group": "letter"},
    )

    name: str = attrs.field(kw_only=True, default="regex")
    pattern: str = attrs.field(kw_only=True)
    """A Python regular expression, searched in the output (it cannot hang)."""
    case_insensitive: bool = attrs.field(kw_only=True, default=False)
    """Match ignoring case."""
    full_match: bool = attrs.field(kw_only=True, default=False)
    """The whole output must match; by default the pattern is searched anywhere."""
    group: Any = attrs.field(
        kw_only=True,
        default=None,
        metadata={
            "help": "A group's number or name: the text it captured must equal the expected value."
        },
    )
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
        self._check_group(compiled)
        match = compiled.fullmatch if self.full_match else compiled.search
        object.__setattr__(self, "_match", match)
        object.__setattr__(self, "_groups", compiled.groups > 0)
        shown = f"/{self.pattern}/" + ("i" if self.case_insensitive else "")
        object.__setattr__(self, "_shown", shown)

    def _check_group(self, compiled: Pattern) -> None:
        """`group` names a group of the pattern: a number from 0 (the whole match) to the
        number of groups, or a group's name."""
        group = self.group
        if group is None:
            return
        if type(group) is int:
            if 0 <= group <= compiled.groups:
                return
            why = f"the pattern has {compiled.groups} group{'s' if compiled.groups != 1 else ''}"
        elif type(group) is str and group:
            if group in compiled.group_names:
                return
            names = ", ".join(repr(name) for name in sorted(compiled.group_names)) or "none"
            why = f"the pattern has no group named {group!r} (its named groups: {names})"
        else:
            raise OptionError(
                "group",
                f"expected a group's number or name, got {group!r} ({type(group).__name__})",
            )
        raise OptionError(
            "group",
            f"{why}; give a number from 0 (the whole match) to {compiled.groups}, or the name "
            "of a (?P<name>...) group",
        )

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
        if self.group is not None:
            return self._compared(sample, match)
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

    def _compared(self, sample: Sample, match: Any) -> GradeResult:
        """The result of `group`: the text the group captured compared with `expected`."""
        texts = compared_texts("regex", self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        expected = texts[1]
        captured = match[self.group]
        group = f"group {self.group!r}"
        details = {"match": match[0], "group": self.group, "captured": captured}
        if captured is None:
            message = f"{group} of {self._shown} captured nothing in {quote(match[0])}"
            return GradeResult("regex", self.name, False, 0.0, message, details)
        if self.case_insensitive:
            passed = captured.casefold() == expected.casefold()
        else:
            passed = captured == expected
        if passed:
            message = f"{group} of {self._shown} captured {quote(captured)}, as expected"
            return GradeResult("regex", self.name, True, 1.0, message, details)
        message = f"expected {quote(expected)}, {group} of {self._shown} captured {quote(captured)}"
        return GradeResult("regex", self.name, False, 0.0, message, details)
