"""Every kind a registry knows, with where it comes from and whether it can be used: the rows
of `gradekit kinds`."""

from __future__ import annotations

from typing import Any

from gradekit._errors import GradekitError
from gradekit.registry.registry import Registry

__all__ = ["kind_rows"]


def kind_rows(registry: Registry) -> list[dict[str, Any]]:
    """One row per kind (sorted): `kind`, `distribution`, `version`, `entry_point`, and
    `error` (None for a usable kind, else why it cannot be used).

    Loads every kind's factory to find out (imports every plugin).
    """
    failures: dict[str, str] = {}
    for kind in registry.kinds():
        try:
            registry.factory(kind)
        except GradekitError as error:
            failures[kind] = str(error)
    return [
        {
            "kind": info.kind,
            "distribution": info.distribution,
            "version": info.version,
            "entry_point": info.value,
            "error": info.error or failures.get(info.kind),
        }
        for info in registry.describe()
    ]
