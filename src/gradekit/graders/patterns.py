"""Users' patterns, matched so that none can hang a run: regular expressions (`Pattern`) and
workspace globs (`Glob`), with the workspace walk the globs select from and the error of a
sample without a workspace (`workspace_error`, shared by the agent kinds and the judge).

Every option that takes a pattern matched against what an agent produced (`regex`'s
`pattern`, `behavior`'s `{regex: ...}` argument matchers, `file`'s `contains` and globs,
`program`'s `match: regex`, the patterns of `json`'s `schema`) is compiled by `Pattern`, with
the `regex` package (a superset of `re`'s syntax) rather than `re`: `re` backtracks in C
holding the GIL, with no time limit, so `^(a+)+$` against 34 `a`s and a `b` ran for an hour,
and neither the runner's timeout nor a signal handler could act meanwhile. `regex` matches with
the GIL released (`concurrent=True`: the text is an immutable str), so the runner's timeout
and signal handlers keep running, and stops a match at a time limit (`MATCH_SECONDS`), raising
`PatternTimeoutError`: the grader's error result on that sample. `regex` counts that limit in
the process's CPU time, so a match that other threads share the CPU with ends sooner, never
later. bench/RESULTS.md has the engines compared. `regex` is imported when the first pattern
is compiled: `import gradekit` does not pay for it.

Globs are relative to the workspace, `/`-separated and case-sensitive: `*` and `?` match within
one path segment, `[abc]` a character class, and a `**` segment any number of folders (zero
included). A glob that is absolute or climbs out of the workspace is refused. Globs match the
agent's file names with the time limit of every user pattern (`Pattern`):
`*_*_*_*.py` against a 255-character name backtracked for minutes in `re`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from gradekit.core.errors import OptionError, PatternTimeoutError
from gradekit.core.types import Sample

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "HIDDEN_DIRS",
    "INVALID",
    "MATCH_SECONDS",
    "Glob",
    "Pattern",
    "WorkspaceFile",
    "bad_glob",
    "walk",
    "workspace_error",
]


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

    __slots__ = ("_fullmatch", "_search", "group_names", "groups", "option", "pattern", "seconds")

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
        self.group_names: Final[frozenset[str]] = frozenset(compiled.groupindex)
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


HIDDEN_DIRS: Final = frozenset({".git", "__pycache__", "node_modules", ".venv"})
"""Folders whose files are not counted unless a glob names them."""


def bad_glob(pattern: str) -> str | None:
    """Why `pattern` is not a usable workspace glob, or None when it is."""
    if not pattern:
        return "a glob cannot be empty"
    if pattern.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", pattern):
        return f"glob '{pattern}' is absolute; globs are relative to the workspace"
    if ".." in re.split(r"[/\\]", pattern):
        return f"glob '{pattern}' climbs out of the workspace ('..'); globs stay inside it"
    return None


def _segment(segment: str) -> str:
    out = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in segment[index + 2 :]:
            end = segment.index("]", index + 2)
            body = segment[index + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


@attrs.frozen
class Glob:
    """A compiled workspace glob; `names` are the hidden folders it names explicitly.

    `option` names the option that holds it, for its errors: a glob that cannot be compiled (a
    class such as `[z-a]`) is an OptionError there, one that matches a name past the time
    limit a PatternTimeoutError."""

    pattern: str
    option: str = attrs.field(default="glob", kw_only=True, eq=False)
    regex: Pattern = attrs.field(init=False)
    names: frozenset[str] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        segments = [part for part in self.pattern.strip("/").split("/") if part not in ("", ".")]
        parts = []
        for position, segment in enumerate(segments):
            last = position == len(segments) - 1
            if segment == "**":
                parts.append(".*" if last else "(?:[^/]+/)*")
            else:
                parts.append(_segment(segment) + ("" if last else "/"))
        try:
            regex = Pattern("".join(parts), f"{self.option} {self.pattern!r}")
        except OptionError as error:
            why = error.message.removeprefix(INVALID)
            raise OptionError(self.option, f"invalid glob {self.pattern!r}: {why}") from None
        object.__setattr__(self, "regex", regex)
        object.__setattr__(self, "names", frozenset(segments) & HIDDEN_DIRS)

    def matches(self, file: WorkspaceFile) -> bool:
        """True when `file` matches, and every hidden folder on its path is named here."""
        return file.hidden <= self.names and self.regex.fullmatch(file.path) is not None


@attrs.frozen
class WorkspaceFile:
    """A file of the workspace: `/`-separated relative path, hidden folders on that path."""

    path: str
    absolute: Path
    hidden: frozenset[str] = frozenset()


def walk(root: Path, enter: Iterable[str] = ()) -> list[WorkspaceFile]:
    """Every regular file under `root`, sorted; hidden folders only if listed in `enter`.

    Symlinks are never followed out of the workspace: a link whose target lies outside is not a
    workspace file; a link to a file inside is one; linked folders are not entered (no loops).
    """
    root = root.resolve()
    entered = frozenset(enter)
    files: list[WorkspaceFile] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        relative = here.relative_to(root)
        hidden = frozenset(relative.parts) & HIDDEN_DIRS
        dirs[:] = [d for d in dirs if d not in HIDDEN_DIRS or d in entered]
        for name in names:
            path = here / name
            if path.is_symlink() and not _inside(path, root):
                continue
            if not path.is_file():
                continue
            rel = (relative / name).as_posix()
            files.append(WorkspaceFile(rel, path, hidden))
    files.sort(key=lambda file: file.path)
    return files


def _inside(path: Path, root: Path) -> bool:
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return target == root or root in target.parents


def workspace_error(sample: Sample) -> str | None:
    """Why the sample's workspace cannot be graded (an error text), or None when it can."""
    if not sample.workspace:
        return (
            "ValueError: the sample has no workspace; give the case a `workspace` folder "
            "holding the files the agent wrote"
        )
    if not Path(sample.workspace).is_dir():
        return f"FileNotFoundError: workspace '{sample.workspace}' is not a folder; check the path"
    return None
