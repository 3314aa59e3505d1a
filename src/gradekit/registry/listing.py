"""Every kind a registry knows, with where it comes from and whether it can be used: the rows
of `gradekit kinds`."""

from __future__ import annotations

from typing import Any

from gradekit.registry.registry import Registry

__all__ = ["kind_rows"]


def kind_rows(registry: Registry) -> list[dict[str, Any]]:
    """One row per kind and source (sorted): `kind`, `distribution`, `version`, `entry_point`,
    and `error` (None for a usable kind, else why it cannot be used, on the row of the source
    at fault). Loads every plugin's kind to find out; gradekit's own need nothing to load."""
    return [
        {
            "kind": info.kind,
            "distribution": info.distribution,
            "version": info.version,
            "entry_point": info.value,
            "error": info.error,
        }
        for info in registry.describe(load=True)
    ]
