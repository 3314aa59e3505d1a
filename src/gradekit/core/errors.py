"""The error hierarchy: every error gradekit raises derives from `GradekitError`.

Each error also subclasses the builtin it refines (a config error is a `ValueError`, an unknown
kind a `LookupError`), carries its data as attributes, survives pickling (process workers send
errors back to the parent) and ends its message with what the user must do. The close-match
hints ("did you mean") of every error that names a wrong word live here too.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any

import attrs

__all__ = [
    "CommandError",
    "ConfigError",
    "DuplicateKindError",
    "ExecutorError",
    "ExitRefusedError",
    "GradeErrored",
    "GradekitError",
    "JudgeConnectionError",
    "JudgeError",
    "JudgeHTTPError",
    "JudgeReplyError",
    "JudgeTimeoutError",
    "OptionError",
    "OptionWarning",
    "PatternTimeoutError",
    "PluginLoadError",
    "Problem",
    "SandboxError",
    "SelectionError",
    "UnknownKindError",
    "WriteError",
    "close_matches",
    "did_you_mean",
    "hint_suffix",
]


def close_matches(word: str, candidates: typing.Iterable[str]) -> list[str]:
    """Up to three candidates that look like `word`: the 'did you mean' of every error."""
    import difflib  # only when a name is wrong: not on every registry import

    return difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.75)


def did_you_mean(word: str, candidates: typing.Iterable[str]) -> str | None:
    """`did you mean 'threshold'?` for the closest candidate, or None when none is close."""
    hits = close_matches(word, candidates)
    return f"did you mean '{hits[0]}'?" if hits else None


def hint_suffix(word: str, candidates: typing.Iterable[str]) -> str:
    """` (did you mean 'threshold'?)`, to end an error message with, or "" when none is close."""
    hint = did_you_mean(word, candidates)
    return f" ({hint})" if hint else ""


class GradekitError(Exception):
    """Root of every error gradekit raises."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses keep their data in attributes; rebuild from those, not from `args`.
        return (_rebuild, (type(self), self.__dict__.copy(), self.args))


def _rebuild(cls: type[GradekitError], state: dict[str, Any], args: tuple[Any, ...]) -> Any:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


@attrs.frozen
class Problem:
    """One thing wrong with a configuration.

    `path` leads from the configuration's root to the offending value, as mapping keys (str)
    and sequence indexes (int); `key` is true when the problem is the key itself (an unknown
    option), not its value. `where` is `file:line:column` once the problem has been placed in
    a file; it is then written as `suite.yaml:14:9: cases[2].graders[0]: message`.
    """

    path: tuple[str | int, ...]
    message: str
    key: bool = False
    where: str | None = None

    def location(self, root: str = "$") -> str:
        """The path written the way users read it: `$.cases[2].graders[0].threshold`."""
        return format_path(self.path, root)

    def __str__(self) -> str:
        if self.where is not None:
            inside = format_path(self.path, "")
            prefix = f"{self.where}: {inside}" if inside else self.where
            return f"{prefix}: {self.message}"
        return f"{self.location()}: {self.message}" if self.path else self.message


def format_path(path: Sequence[str | int], root: str = "$") -> str:
    """Format a key/index path as `root.key[index].key` (a key that is not text, such as YAML's
    `null: x`, as written by `str`)."""
    text = root
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


class ConfigError(GradekitError, ValueError):
    """A configuration cannot be used: a bad option, a missing module, a malformed suite.

    `problems` lists every problem found (all at once, never only the first); `source` names
    the file, when there is one.
    """

    def __init__(
        self,
        message: str,
        problems: Sequence[Problem] = (),
        *,
        source: str | None = None,
    ) -> None:
        self.message = message
        self.problems = tuple(problems)
        self.source = source
        super().__init__(message)

    def problems_under(self, *prefix: str | int) -> list[Problem]:
        """Every problem (the message as one, when there are none) with `prefix` put before
        its path: how an error in a nested config (a composite's child, an entry of a list)
        is reported at its place in the enclosing one."""
        inner = self.problems or (Problem((), self.message),)
        return [attrs.evolve(problem, path=(*prefix, *problem.path)) for problem in inner]

    def __str__(self) -> str:
        if not self.problems:
            return self.message
        lines = [self.message] if self.message else []
        lines.extend(str(problem) for problem in self.problems)
        return "\n".join(lines)


class UnknownKindError(GradekitError, LookupError):
    """No installed distribution and no `register` call provides this kind."""

    def __init__(self, kind: str, suggestions: Sequence[str] = ()) -> None:
        self.kind = kind
        self.suggestions = tuple(suggestions)
        if self.suggestions:
            hint = "did you mean " + " or ".join(f"'{s}'" for s in self.suggestions) + "?"
        else:
            hint = (
                "install the package that provides it, or register it with "
                "gradekit.register(); `gradekit kinds` lists the known kinds"
            )
        super().__init__(f"unknown grader kind '{kind}'; {hint}")

    def __str__(self) -> str:
        return str(self.args[0])


class DuplicateKindError(GradekitError, LookupError):
    """Two different sources provide the same kind; gradekit never picks one silently."""

    def __init__(self, kind: str, sources: Sequence[str]) -> None:
        self.kind = kind
        self.sources = tuple(sources)
        named = " and ".join(self.sources)
        super().__init__(
            f"grader kind '{kind}' is provided by both {named}; "
            "uninstall one of them or rename the kind in one package"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class PluginLoadError(GradekitError, ImportError):
    """A plugin's entry point could not be loaded; only that plugin's kinds are affected."""

    def __init__(self, kind: str, distribution: str, value: str, cause: str) -> None:
        self.kind = kind
        self.distribution = distribution
        self.value = value
        self.cause = cause
        super().__init__(
            f"cannot load grader kind '{kind}' from distribution {distribution} "
            f"(entry point '{value}'): {cause}; fix or reinstall that distribution, "
            "or uninstall it"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class OptionError(GradekitError, ValueError):
    """Raised by an option validator: `field` is the option at fault, `message` what is wrong.

    Validators raise this instead of a bare ValueError so the problem names its key; the
    registry turns it into a `ConfigError` problem at that key.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class OptionWarning(UserWarning):
    """Warned by a kind about an option it accepts but that is probably not what was meant (a
    misspelt matcher map, `{regx: p}`, which would only equal that very map).

    `path` leads from the options to the value at fault; the suite loader reports it at its
    file and line among the suite's warnings (an error with `strict`), as it does another
    framework's key.
    """

    def __init__(self, path: Sequence[str | int], message: str) -> None:
        self.path = tuple(path)
        self.message = message
        super().__init__(f"{format_path(self.path, '')}: {message}")


class CommandError(GradekitError, OSError):
    """A command could not be found or started: the grader could not grade (an error result)."""


class SandboxError(GradekitError, RuntimeError):
    """The sandbox asked for (such as `network: false`) cannot be provided on this machine."""


class SelectionError(ConfigError):
    """A run's selection (`select=`, `--filter`) matched no case of the suite: nothing was graded.

    `selection` says what was asked (`--filter 'growth-*'`), `suite` names the suite (its file
    when it has one).
    """

    def __init__(self, suite: str, selection: str, hint: str) -> None:
        self.suite = suite
        self.selection = selection
        self.hint = hint
        super().__init__(f"no case of {suite} matches {selection}; nothing was graded: {hint}")


class WriteError(GradekitError, OSError):
    """A report or the results log could not be written.

    `path` is the file, `what` names it when the path alone does not (`the results log`),
    `reason` is the cause (`No space left on device`, `it is a folder, not a file`). `report`
    is set when a run stopped because its results log could not be written: the report of
    every case the log holds (`complete=False`).
    """

    def __init__(
        self, path: str, reason: str, hint: str = "check the path", *, what: str = ""
    ) -> None:
        self.path = path
        self.reason = reason
        self.hint = hint
        self.what = what
        self.report: Any = None
        named = f"{what} {path}" if what else path
        super().__init__(f"cannot write {named}: {reason}; {hint}")

    def __str__(self) -> str:
        return str(self.args[0])


class ExecutorError(GradekitError, RuntimeError):
    """The executor that grades a run elsewhere (a Dask cluster) cannot be used: its package
    is not installed, its scheduler cannot be reached, or it was lost during the run."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


class ExitRefusedError(GradekitError, SystemExit):
    """A grader (or a thread it started) called `os._exit` during a run: refused, raised in
    the caller instead, so the run goes on and writes its reports (that grade's error result).

    A `SystemExit`, as the exit it stands for; `code` is the code the caller asked for.
    """

    def __init__(self, code: int) -> None:
        self.exit_code = code
        super().__init__(
            f"os._exit({code}) was called while gradekit was grading: a grader cannot end "
            "gradekit's process; return its result or raise an error instead"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class GradeErrored(GradekitError, RuntimeError):
    """`gradekit.testing.assert_grade`: the grader could not grade the sample (an error
    result: it raised, timed out or returned something malformed). Not an AssertionError:
    an error is never a failure of the sample. `name` is the grader's, `error` its result's
    error (`"ExceptionClass: message"`)."""

    def __init__(self, name: str, error: str, sample: str) -> None:
        self.name = name
        self.error = error
        self.sample = sample
        super().__init__(
            f"{name} could not grade the sample: {error}; fix the grader's configuration or "
            f"what it reads, then run again{sample}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class JudgeError(GradekitError, RuntimeError):
    """A judge call of the `prompt` kind gave no usable judgement; it becomes the `error`
    of that grade's result, never a raise out of a grade."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


class JudgeHTTPError(JudgeError):
    """The judge's server answered with an HTTP error (after any retries). `status` is the
    HTTP status code."""

    def __init__(self, message: str, status: int) -> None:
        self.status = status
        super().__init__(message)


class JudgeTimeoutError(JudgeError, TimeoutError):
    """No reply within the grader's `timeout` (or `request_timeout`, after the retries)."""


class JudgeConnectionError(JudgeError, ConnectionError):
    """The judge's server could not be reached, or dropped the connection (after retries)."""


class JudgeReplyError(JudgeError, ValueError):
    """The judge answered, but its reply holds no usable score (or no logprobs, when asked)."""


class PatternTimeoutError(GradekitError, TimeoutError):
    """A user's regular expression did not finish matching within its time limit (it
    backtracks: nested repeats such as `(a+)+` against a text that almost matches). It becomes
    the error result of the grader on that sample, never a fail.

    `option` names the option that holds the pattern (`pattern`, `contains.src/*.py`,
    `expected_calls[0].arguments.q.regex`), `pattern` is the pattern, `seconds` the limit.
    """

    def __init__(self, option: str, pattern: str, seconds: float) -> None:
        self.option = option
        self.pattern = pattern
        self.seconds = seconds
        super().__init__(
            f"{option}: the pattern {pattern!r} did not finish matching within {seconds:g}s "
            "of CPU time (it backtracks: nested repeats such as (a+)+ or (a|a)* take "
            "exponential time on a text that almost matches); rewrite it without a repeat "
            "inside a repeat that can match the same text"
        )

    def __str__(self) -> str:
        return str(self.args[0])
