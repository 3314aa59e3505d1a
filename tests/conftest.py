"""Plugins every test folder may use (pytest reads `pytest_plugins` only from this top level),
and the tests' own cache folder."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True, scope="session")
def _private_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests' own cache folder (`XDG_CACHE_HOME`), for them and the gradekit processes they
    start: the limits launcher is built there once a session, not in the user's home."""
    from gradekit.process.limits import reset

    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    reset()
    yield
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before
    reset()
