"""`gradekit kinds` reads installed metadata only: it runs no pack's code.

The docs recommend it to review a pack's entry points before trusting the pack, so listing
must not import the pack: a module's top level runs whatever it holds. `--load` imports each
pack's kinds to check that they load, for packs already trusted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cli_support import Run

MARKER_MODULE = """
from pathlib import Path

Path(__file__).with_name("imported.txt").write_text("the pack's code ran")


def factory(name, config):
    raise AssertionError("never created by kinds")
"""


def _dist(site: Path, name: str, entry_points: dict[str, str]) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "".join(f"{kind} = {value}\n" for kind, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[gradekit.graders]\n{lines}")


def _site(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "acme_marker.py").write_text(MARKER_MODULE)
    (site / "acme_boom.py").write_text("raise ImportError('acme_boom needs a missing library')\n")
    _dist(site, "acme-marker", {"acme.marker": "acme_marker:factory"})
    _dist(site, "acme-boom", {"acme.boom": "acme_boom:factory"})
    _dist(site, "acme-twin-a", {"acme.twin": "acme_marker:factory"})
    _dist(site, "acme-twin-b", {"acme.twin": "acme_boom:factory"})
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path}


def test_kinds_lists_packs_without_running_their_code(gradekit: Run, tmp_path: Path) -> None:
    env = _site(tmp_path)

    listed = gradekit("kinds", "--json", env=env)
    text = gradekit("kinds", env=env)

    assert listed.returncode == 0, listed.stderr
    assert text.returncode == 0, text.stderr
    assert not (tmp_path / "site" / "imported.txt").exists()
    rows = {(row["kind"], row["distribution"]): row for row in json.loads(listed.stdout)}
    assert rows["acme.marker", "acme-marker"]["entry_point"] == "acme_marker:factory"
    assert rows["acme.marker", "acme-marker"]["error"] is None
    assert rows["acme.boom", "acme-boom"]["error"] is None  # not imported: not known to fail
    # Two packs declaring one kind is read from the metadata: no import needed.
    for twin in ("acme-twin-a", "acme-twin-b"):
        assert "is provided by both" in rows["acme.twin", twin]["error"]
    marker = next(line for line in text.stdout.splitlines() if line.startswith("acme.marker "))
    assert marker.split() == ["acme.marker", "acme-marker", "1.0", "acme_marker:factory"]
    assert "1 failed to load:" in text.stdout  # the twins' conflict, once


def test_kinds_load_imports_each_pack_and_lists_those_that_fail(
    gradekit: Run, tmp_path: Path
) -> None:
    env = _site(tmp_path)

    listed = gradekit("kinds", "--json", "--load", env=env)

    assert listed.returncode == 0, listed.stderr
    assert (tmp_path / "site" / "imported.txt").exists()
    rows = {(row["kind"], row["distribution"]): row for row in json.loads(listed.stdout)}
    assert rows["acme.marker", "acme-marker"]["error"] is None
    assert "acme_boom needs a missing library" in rows["acme.boom", "acme-boom"]["error"]
