"""The kit's test packs, built and installed for real, and ways to run code that sees them.

`packs/acme-broken` registers kinds that each break one contract rule; `packs/acme-clean`
registers kinds that keep every rule; `packs/acme-exits` kinds that end the process checking
them. All are installed once per session with
`pip install --target` into a folder; the tests either put that folder on a child process's
PYTHONPATH (pytest in a subprocess, the `gradekit` command) or on this process's `sys.path`
(check_grader, with a fresh registry that lists their entry points).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pack_support import PACKS, pip_install_target

from gradekit import Registry


@pytest.fixture(scope="session")
def pack_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where acme-broken and acme-clean are really installed."""
    site = tmp_path_factory.mktemp("pack-site")
    pip_install_target(site, PACKS / "acme-broken", PACKS / "acme-clean", PACKS / "acme-exits")
    return site


@pytest.fixture
def pack_env(pack_site: Path) -> dict[str, str]:
    """The environment for a child process that sees the installed test packs."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pack_site), env.get("PYTHONPATH")]))
    env.pop("HYPOTHESIS_PROFILE", None)
    return env


@pytest.fixture
def pack_registry(pack_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    """A fresh registry (entry points included) while the test packs are on sys.path."""
    monkeypatch.syspath_prepend(str(pack_site))
    yield Registry()
    for name in [
        name for name in sys.modules if name.split(".")[0] in ("acme_broken", "acme_clean")
    ]:
        del sys.modules[name]
