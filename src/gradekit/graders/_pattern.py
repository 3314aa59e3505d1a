"""Users' regular expressions, matched so that none can hang a run.

Every option that takes a pattern matched against what an agent produced (`regex`'s
`pattern`, `behavior`'s `{regex: ...}` argument matchers, `file`'s `contains` and globs,
`program`'s `match: regex`, the patterns of `json`'s `schema`) is compiled here, with the
`regex` package (a superset of `re`'s syntax) rather than `re`: `re` backtracks in C holding
the GIL, with no time limit, so `^(a+)+$` against 34 `a`s and a `b` ran for an hour, and
neither the runner's timeout nor a signal handler could act meanwhile. `regex` matches with
the GIL released (`concurrent=True`: the text is an immutable str), so the runner's timeout
and signal handlers keep running, and stops a match at a time limit (`MATCH_SECONDS`), raising
`PatternTimeoutError`: the grader's error result on that sample. `regex` counts that limit in
the process's CPU time, so a match that other threads share the CPU with ends sooner, never
later. bench/RESULTS.md has the engines compared.

`regex` is imported when the first pattern is compiled: `import gradekit` does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from gradekit._errors import OptionError, PatternTimeoutError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["INVALID", "MATCH_SECONDS", "Pattern"]

INVALID: Final = "invalid regular expression: "
"""How the message of an invalid pattern's OptionError begins (the engine's words follow)."""

MATCH_SECONDS: Final = 2.0
"""The time limit of one match (CPU seconds of the process). A pattern that does not backtrack
matches 16 MiB of text in a few hundredths of a second; one that does runs for ever."""


class Pattern:
    """A user's pattern compiled for matching agent output (see the module).

    `option` names the option that holds it, for the messages of its errors: an invalid
    pattern is an `OptionError` at once, a match past `seconds` a `PatternTimeoutError`.
    """

    __slots__ = ("_fullmatch", "_search", "groups", "option", "pattern", "seconds")

    def __init__(
        self,
        pattern: str,
        option: str,
        *,
        ignore_case: bool = False,
        multiline: bool = False,
        seconds: float = MATCH_SECONDS,
    ) -> None:
        import regex

        flags = (regex.IGNORECASE if ignore_case else 0) | (regex.MULTILINE if multiline else 0)
        try:
            # VERSION0: `re`'s behaviour wherever `re` accepts the pattern.
            compiled = regex.compile(pattern, flags | regex.VERSION0)
        except regex.error as error:
            raise OptionError(option, f"{INVALID}{error}") from None
        self.pattern: Final = pattern
        self.option: Final = option
        self.seconds: Final = seconds
        self.groups: Final[int] = compiled.groups
        self._search: Final[Callable[..., Any]] = compiled.search
        self._fullmatch: Final[Callable[..., Any]] = compiled.fullmatch

    def search(self, text: str) -> Any:
        """The first match of the pattern in `text` (a `regex.Match`, as `re.Match`), or
        None; raises PatternTimeoutError past the time limit."""
        try:
            return self._search(text, timeout=self.seconds, concurrent=True)
        except TimeoutError:
            raise PatternTimeoutError(self.option, self.pattern, self.seconds) from None

    def fullmatch(self, text: str) -> Any:
        """The match of the pattern against the whole of `text`, or None; raises
        PatternTimeoutError past the time limit."""
        try:
            return self._fullmatch(text, timeout=self.seconds, concurrent=True)
        except TimeoutError:
            raise PatternTimeoutError(self.option, self.pattern, self.seconds) from None
