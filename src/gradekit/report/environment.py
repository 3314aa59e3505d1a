"""What a report was made with, so a change of score can be traced to what changed around it:
gradekit's version, Python's, the suite file's hash, and the distribution and version that
provided each kind the suite uses (the JSON report's `environment`).

Versions are read from installed metadata when a report is built (`gradekit_version`), never
by `import gradekit`.
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Mapping
from typing import Any

import attrs

from gradekit.core.types import EMPTY, FrozenDict, freeze

__all__ = [
    "Environment",
    "KindChange",
    "KindSource",
    "file_sha256",
    "gradekit_version",
    "kind_changes",
    "python_version",
]


@attrs.frozen
class KindSource:
    """The distribution that provided a kind, and its version; both None for a kind
    registered in code (`gradekit.register`) rather than installed."""

    distribution: str | None
    version: str | None

    def label(self) -> str:
        """`gradekit-sql 0.1.0`, or `registered in code`."""
        if self.distribution is None:
            return "registered in code"
        return f"{self.distribution} {self.version or '?'}"


@attrs.frozen
class Environment:
    """What a run was made with. `suite_sha256`: the SHA-256 of the suite file's bytes when the
    run started (None for a suite built in Python). `kinds`: every kind the suite uses,
    composites' children included, by name (sorted)."""

    gradekit: str | None
    python: str
    suite_sha256: str | None = None
    kinds: FrozenDict[str, KindSource] = attrs.field(default=EMPTY, converter=freeze)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the report's `environment`)."""
        return {
            "gradekit": self.gradekit,
            "python": self.python,
            "suite_sha256": self.suite_sha256,
            "kinds": {
                kind: {"distribution": source.distribution, "version": source.version}
                for kind, source in sorted(self.kinds.items())
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Environment:
        """Read the JSON form back; missing keys are None (a report of an older gradekit)."""
        kinds = data.get("kinds")
        return cls(
            gradekit=data.get("gradekit"),
            python=str(data.get("python") or ""),
            suite_sha256=data.get("suite_sha256"),
            kinds={
                str(kind): KindSource(source.get("distribution"), source.get("version"))
                for kind, source in (kinds.items() if isinstance(kinds, Mapping) else ())
                if isinstance(source, Mapping)
            },
        )

    def properties(self) -> list[tuple[str, str]]:
        """The environment as flat `(name, value)` pairs (JUnit `<property>`s, Markdown)."""
        pairs = [("gradekit.version", self.gradekit or "?"), ("gradekit.python", self.python)]
        if self.suite_sha256 is not None:
            pairs.append(("gradekit.suite_sha256", self.suite_sha256))
        pairs.extend(
            (f"gradekit.kind.{kind}", source.label()) for kind, source in sorted(self.kinds.items())
        )
        return pairs


@attrs.frozen
class KindChange:
    """A kind both runs use whose providing distribution or version differs."""

    kind: str
    base: KindSource
    new: KindSource

    def text(self) -> str:
        """`sql.result_set: gradekit-sql 0.1.0 -> 0.2.0`."""
        base, new = self.base, self.new
        if base.distribution == new.distribution and base.distribution is not None:
            return f"{self.kind}: {base.distribution} {base.version} -> {new.version}"
        return f"{self.kind}: {base.label()} -> {new.label()}"


def kind_changes(base: Environment | None, new: Environment | None) -> list[KindChange]:
    """The kinds used by both runs whose distribution or version differs, sorted by kind.
    Nothing when either run records no environment (a results log, an older report)."""
    if base is None or new is None:
        return []
    return [
        KindChange(kind, base.kinds[kind], new.kinds[kind])
        for kind in sorted(base.kinds.keys() & new.kinds.keys())
        if base.kinds[kind] != new.kinds[kind]
    ]


@functools.cache
def gradekit_version() -> str | None:
    """gradekit's installed version (None when it runs from a source tree, uninstalled)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gradekit")
    except PackageNotFoundError:
        return None


def python_version() -> str:
    """`3.11.7 (CPython)`."""
    return f"{platform.python_version()} ({platform.python_implementation()})"


def file_sha256(path: str) -> str | None:
    """The SHA-256 of the file's bytes, in hex; None when it cannot be read."""
    import hashlib  # only when a run starts: the report model is imported by far more

    digest = hashlib.sha256()
    try:
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()
