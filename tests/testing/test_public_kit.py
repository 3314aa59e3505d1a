"""gradekit.testing's public surface: `__all__` is honest and documented, and one contract test
method exists per rule."""

from __future__ import annotations

import gradekit.testing
from gradekit.testing import GraderContract
from gradekit.testing._rules import RULES


def test_every_name_in_all_resolves_and_is_documented() -> None:
    for name in gradekit.testing.__all__:
        assert getattr(gradekit.testing, name).__doc__, f"gradekit.testing.{name} has no docstring"
    assert dir(gradekit.testing) == sorted(gradekit.testing.__all__)


def test_the_contract_has_one_documented_test_per_rule() -> None:
    tests = sorted(name for name in vars(GraderContract) if name.startswith("test_"))
    assert tests == sorted(f"test_{rule.name}" for rule in RULES)
    for rule in RULES:
        method = getattr(GraderContract, f"test_{rule.name}")
        assert method.__doc__ == f"Contract: {rule.summary}."
