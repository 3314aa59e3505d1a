"""Where kinds come from: gradekit's own entry points as a table in code (`BUILTIN_KINDS`),
and installed plugins' entry points of a group, read from installed metadata only.

The registry resolves a built-in kind from `BUILTIN_KINDS` without reading any installed
metadata: finding gradekit's own distribution means importing importlib.metadata and
searching the path, and the full scan of entry points costs time for every installed plugin
(bench/RESULTS.md, "Start-up of the registry"). The pyproject keeps declaring the same entry
points (so other tools see them), and tests/registry/test_builtin_table.py holds the two equal.

Reading them is the scan whose cost grows with every installed distribution, so the registry
runs it once, and only when it needs a kind that is not gradekit's own (a dotted name), or
the full list. Which entry points a distribution may declare is decided here: a name must
match KIND_PATTERN, and names without a dot belong to gradekit.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any, Final

import attrs

__all__ = [
    "BUILTIN_DISTRIBUTION",
    "BUILTIN_KINDS",
    "KIND_PATTERN",
    "PluginEntry",
    "PluginScan",
    "metadata",
    "refusal",
    "scan",
]


KIND_PATTERN: Final = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
"""What a kind name looks like; a name without a dot belongs to gradekit's own kinds."""

BUILTIN_DISTRIBUTION: Final = "gradekit"

BUILTIN_KINDS: Final[Mapping[str, str]] = {
    "equality": "gradekit.graders.equality:Equality",
    "numeric": "gradekit.graders.numeric:Numeric",
    "contains": "gradekit.graders.contains:Contains",
    "not_contains": "gradekit.graders.contains:NotContains",
    "regex": "gradekit.graders.regex:Regex",
    "json": "gradekit.graders.json:Json",
    "code": "gradekit.graders.user_code:Code",
    "all": "gradekit.run.composite:AllOf",
    "any": "gradekit.run.composite:AnyOf",
    "at_least": "gradekit.run.composite:AtLeast",
    "weighted": "gradekit.run.composite:Weighted",
    "not": "gradekit.run.composite:Not",
    "behavior": "gradekit.graders.behavior:Behavior",
    "file": "gradekit.graders.file:File",
    "program": "gradekit.graders.program:Program",
    "build": "gradekit.graders.build:Build",
    "lint": "gradekit.graders.lint:Lint",
    "prompt": "gradekit.graders.prompt.kind:Prompt",
    "budget": "gradekit.graders.budget:Budget",
    "math": "gradekit.graders.math:Math",
}


@attrs.frozen
class PluginEntry:
    """One entry point of an installed distribution; `refused` says why it cannot be used."""

    kind: str
    distribution: str
    version: str
    value: str
    entry_point: Any
    refused: str | None = None


@attrs.frozen
class PluginScan:
    """Every other distribution's entry points, and the version of the `own` distribution."""

    entries: tuple[PluginEntry, ...]
    own_version: str | None


def refusal(kind: str, distribution: str) -> str | None:
    """Why a distribution other than gradekit may not declare `kind`; None when it may."""
    if not KIND_PATTERN.match(kind):
        return f"invalid kind name '{kind}': kind names match {KIND_PATTERN.pattern}"
    if "." not in kind:
        namespace = re.sub(r"[^a-z0-9_]+", "_", distribution.lower()).strip("_")
        if not KIND_PATTERN.match(namespace):
            namespace = "acme"
        return (
            "names without a dot belong to gradekit's own kinds, so a distribution must "
            f"namespace its kinds (e.g. '{namespace}.{kind}')"
        )
    return None


def metadata() -> Any:
    """The importlib metadata module: the importlib-metadata backport before 3.12 (its entry
    point API is the newer one), else the standard library's."""
    if sys.version_info < (3, 12):
        try:
            import importlib_metadata

            return importlib_metadata
        except ImportError:  # the backport is a dependency, but the stdlib works on 3.10+
            pass
    import importlib.metadata

    return importlib.metadata


def _name_and_version(dist: Any) -> tuple[str, str]:
    """A distribution's Name and Version, read from the head of its metadata file.

    Both are single-line fields of the header, which ends at the first blank line. Parsing
    the whole file as an email message (`dist.metadata`) was the biggest part of a scan of
    many small plugins (bench/RESULTS.md); that remains the fallback. A
    distribution without readable metadata is named by its folder, with no version.
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, colon, value = line.partition(":")
        if colon and key.lower() in ("name", "version"):
            fields.setdefault(key.lower(), value.strip())
    if "name" in fields and "version" in fields:
        return fields["name"], fields["version"]
    try:
        metadata = dist.metadata
    except Exception:  # MetadataNotFound: a half-deleted install; its kinds only are affected
        return str(getattr(dist, "_path", "<unknown>")), ""
    return metadata["Name"] or "<unknown>", metadata["Version"] or "?"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def scan(group: str, *, own: str | None) -> PluginScan:
    """Every entry point of `group`, except those of the distribution named `own`."""
    entries: list[PluginEntry] = []
    own_version: str | None = None
    seen: set[tuple[str, str]] = set()
    described: dict[int, tuple[str, str]] = {}
    for entry_point in metadata().entry_points(group=group):
        dist = entry_point.dist
        if dist is None:
            name, version = "<unknown>", "?"
        elif id(dist) in described:
            name, version = described[id(dist)]
        else:
            name, version = described[id(dist)] = _name_and_version(dist)
        if own is not None and _normalized(name) == own:
            own_version = own_version or version
            continue
        # The same distribution found twice on the path (or the same value declared twice)
        # is one source, not a conflict.
        key = (entry_point.name, entry_point.value)
        if key in seen:
            continue
        seen.add(key)
        entries.append(
            PluginEntry(
                entry_point.name,
                name,
                version,
                entry_point.value,
                entry_point,
                refusal(entry_point.name, name),
            )
        )
    return PluginScan(tuple(entries), own_version)
