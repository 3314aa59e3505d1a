"""The fixed parts of the HTML report, its style and its script, inlined into every page (no
network, no assets). They live as plain files in `report/_viewer/`, read once when the HTML
writer is first used: `viewer.css`, and the script's parts in the order they run."""

from __future__ import annotations

from importlib.resources import files

__all__ = ["SCRIPT", "STYLE"]

_ASSETS = files("gradekit.report._viewer")

_SCRIPT_PARTS = ("dom.js", "detail.js", "list.js")
"""dom.js: element and text helpers, the collapsible tree; detail.js: one case's sample and
verdicts; list.js: the index, filters, sorting, the address, the virtual list (starts the
page)."""

STYLE = _ASSETS.joinpath("viewer.css").read_text(encoding="utf-8")

SCRIPT = "\n".join(_ASSETS.joinpath(name).read_text(encoding="utf-8") for name in _SCRIPT_PARTS)
