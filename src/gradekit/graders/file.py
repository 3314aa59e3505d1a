"""The `file` kind: checks over the files an agent left in the sample's workspace folder."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import attrs

from gradekit.core.errors import ConfigError, OptionError
from gradekit.core.types import EMPTY, FrozenDict, GradeResult, Sample, freeze
from gradekit.graders.patterns import Glob, Pattern, WorkspaceFile, bad_glob, walk, workspace_error
from gradekit.graders.program import required_size
from gradekit.graders.results import Check, checks_result, validate_threshold

__all__ = ["File"]

_SHOWN = 5  # file names listed in one check message


def _globs(_: object, attribute: attrs.Attribute[Any], value: Iterable[str]) -> None:
    for index, pattern in enumerate(value):
        field = attribute.name if attribute.name == "contains" else f"{attribute.name}[{index}]"
        problem = bad_glob(pattern)
        if problem is not None:
            raise OptionError(field, problem)
        Glob(pattern, option=field)  # an invalid class such as [z-a] is an OptionError here


def _count(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise OptionError(attribute.name, f"must be >= 0, got {value!r}")


def _listing(files: list[WorkspaceFile]) -> str:
    shown = ", ".join(file.path for file in files[:_SHOWN])
    more = len(files) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _read(file: WorkspaceFile, limit: int) -> tuple[str, bool]:
    """The file's text up to `limit` bytes, and whether there was more. An agent can leave a
    sparse file of any size, which costs no disk: read whole, it would fill the memory."""
    try:
        with file.absolute.open("rb") as handle:
            data = handle.read(limit)
            more = bool(handle.read(1))
    except OSError:
        return "", False  # unreadable: it cannot contain the pattern
    return data.decode("utf-8", errors="replace"), more


def _max_file_size(value: Any) -> int:
    return required_size(value, "max_file_size")


def _shown_size(size: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


@attrs.frozen
class File:
    """Checks the sample's workspace: required and forbidden globs, file counts, contents.

    Every constraint is one check (each glob its own); score = fraction passed; passed = every
    check passed, or score >= `threshold` when set. Files under .git, __pycache__,
    node_modules and .venv are not counted unless a glob names that folder.
    """

    kind: ClassVar[str] = "file"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"required_files": ["*.py"]},
        {"forbidden_files": ["*.key"], "max_files": 10},
    )

    name: str = attrs.field(kw_only=True, default="file")
    required_files: tuple[str, ...] = attrs.field(kw_only=True, default=(), validator=_globs)
    """Globs that must each match at least one file."""
    forbidden_files: tuple[str, ...] = attrs.field(kw_only=True, default=(), validator=_globs)
    """Globs that must match no file."""
    min_files: int | None = attrs.field(kw_only=True, default=None, validator=_count)
    """The fewest files the workspace may hold."""
    max_files: int | None = attrs.field(kw_only=True, default=None, validator=_count)
    """The most files the workspace may hold."""
    contains: FrozenDict[str, str] = attrs.field(
        kw_only=True, default=EMPTY, converter=freeze, validator=_globs
    )
    """{glob: regex}: every file the glob matches must contain a match of the regex."""
    max_file_size: Any = attrs.field(kw_only=True, default=16 << 20, converter=_max_file_size)
    """How much of each file `contains` searches (bytes, or a size such as 64MiB)."""
    threshold: float | None = attrs.field(kw_only=True, default=None, validator=validate_threshold)
    _patterns: dict[str, Pattern] = attrs.field(init=False, repr=False, eq=False)
    _globs: dict[str, Glob] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        if not (
            self.required_files
            or self.forbidden_files
            or self.contains
            or self.min_files is not None
            or self.max_files is not None
        ):
            raise ConfigError(
                "a file grader with no constraint checks nothing; set at least one of "
                "required_files, forbidden_files, min_files, max_files, contains"
            )
        patterns = {
            glob: Pattern(regex, f"contains.{glob}", multiline=True)
            for glob, regex in self.contains.items()
        }
        object.__setattr__(self, "_patterns", patterns)
        every = (*self.required_files, *self.forbidden_files, *self.contains)
        object.__setattr__(self, "_globs", {pattern: Glob(pattern) for pattern in every})

    def grade(self, sample: Sample) -> GradeResult:
        """Walk the workspace once and run every check on what is there."""
        error = workspace_error(sample)
        if error is not None:
            return GradeResult.of_error(self.kind, self.name, error)
        assert sample.workspace is not None
        names = frozenset().union(*(glob.names for glob in self._globs.values()))
        files = walk(Path(sample.workspace), enter=names)
        counted = [file for file in files if not file.hidden]
        checks: list[Check] = []
        for pattern in self.required_files:
            found = [file for file in files if self._globs[pattern].matches(file)]
            message = f"found {_listing(found)}" if found else "no file matches"
            checks.append(Check(f"required {pattern}", bool(found), message))
        for pattern in self.forbidden_files:
            found = [file for file in files if self._globs[pattern].matches(file)]
            message = f"found {_listing(found)}" if found else "no file matches"
            checks.append(Check(f"forbidden {pattern}", not found, message))
        if self.min_files is not None:
            ok = len(counted) >= self.min_files
            checks.append(
                Check("min_files", ok, f"{len(counted)} files (at least {self.min_files})")
            )
        if self.max_files is not None:
            ok = len(counted) <= self.max_files
            checks.append(
                Check("max_files", ok, f"{len(counted)} files (at most {self.max_files})")
            )
        for pattern, regex in self._patterns.items():
            matched = [file for file in files if self._globs[pattern].matches(file)]
            checks.append(self._contains_check(pattern, regex, matched))
        return checks_result(
            self.kind, self.name, checks, threshold=self.threshold, details={"files": len(counted)}
        )

    def _contains_check(self, pattern: str, regex: Pattern, files: list[WorkspaceFile]) -> Check:
        label = f"contains {pattern}"
        if not files:
            return Check(label, False, "no file matches")
        missing, cut = [], []
        for file in files:
            text, more = _read(file, self.max_file_size)
            if regex.search(text) is None:
                missing.append(file)
                if more:
                    cut.append(file)
        if missing:
            message = f"/{regex.pattern}/ not found in {_listing(missing)}"
            if cut:
                many = "its" if len(cut) == 1 else "their"
                message += (
                    f" (only {many} first {_shown_size(self.max_file_size)} searched: raise "
                    f"max_file_size to search more of {_listing(cut)})"
                )
            return Check(label, False, message)
        return Check(label, True, f"/{regex.pattern}/ found in {_listing(files)}")
