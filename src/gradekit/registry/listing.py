"""Every kind a registry knows, with where it comes from and whether it can be used: the rows
of `gradekit kinds` (`--load` for `load=True`)."""

from __future__ import annotations

from typing import Any

from gradekit.registry.registry import Registry

__all__ = ["kind_rows"]


def kind_rows(registry: Registry, *, load: bool = False) -> list[dict[str, Any]]:
    """One row per kind and source (sorted): `kind`, `distribution`, `version`, `entry_point`,
    and `error` (None for a kind not known to be unusable, else why it cannot be used, on the
    row of the source at fault).

    Read from installed metadata only, so listing runs no plugin's code (a name refused, two
    distributions declaring one kind are found there); `load` imports every plugin's kind
    to find the ones that fail to load too. gradekit's own need nothing to load."""
    return [
        {
            "kind": info.kind,
            "distribution": info.distribution,
            "version": info.version,
            "entry_point": info.value,
            "error": info.error,
        }
        for info in registry.describe(load=load)
    ]
