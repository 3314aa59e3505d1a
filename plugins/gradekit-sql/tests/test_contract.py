"""gradekit's contract kit over both kinds (skipped until gradekit.testing is available)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

pytest.importorskip("gradekit.testing")

from gradekit.testing import GraderContract, samples

from conftest import make_shop

# One shop database for the whole module: the kit's configs are class attributes.
_SHOP = str(make_shop(Path(tempfile.mkdtemp(prefix="gradekit-sql-contract-")) / "shop.sqlite"))


class TestExecution(GraderContract):
    kind = "sql.execution"
    configs = ({"database": _SHOP}, {"database": _SHOP, "ordered": True, "tolerance": 0.0})
    sample_strategy = samples(require_expected=True)
    deterministic = True
    picklable = True


class TestValid(GraderContract):
    kind = "sql.valid"
    configs = ({}, {"dialect": "postgres"})
    deterministic = True
    picklable = True
