"""The tests `--gradekit-pack DIST` adds: one collector per pack and per kind, one item per
contract rule and example config, each running the rule through `_engine`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from gradekit.registry.plugins import metadata
from gradekit.registry.registry import Registry
from gradekit.testing._engine import contract_settings, run_rule
from gradekit.testing._packs import EXAMPLES_RULE, PackKind, find_pack
from gradekit.testing._rules import Rule
from gradekit.testing._subject import Subject
from gradekit.testing._violation import Violation

__all__ = ["pack_items"]


class ContractBroken(Exception):
    """A rule found broken: its violations, each with its falsifying example."""

    def __init__(self, summary: str, violations: Iterable[Violation]) -> None:
        self.violations = tuple(violations)
        text = "\n\n".join(str(violation) for violation in self.violations)
        super().__init__(f"{summary}: broken\n{text}")


class PackCollector(pytest.Collector):
    """The contract's tests of one installed distribution."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """Nothing to collect lazily: `pack_items` builds the items."""
        return []


class KindCollector(pytest.Collector):
    """The contract's tests of one kind."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """Nothing to collect lazily: `pack_items` builds the items."""
        return []


class ContractItem(pytest.Item):
    """One contract rule on one kind (and one example config, for most rules)."""

    def __init__(self, *, rule: Rule, subject: Subject, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.subject = subject

    def runtest(self) -> None:
        """Run the rule; skip it when it does not apply."""
        outcome = run_rule(self.rule, self.subject, contract_settings())
        if outcome.skipped is not None:
            pytest.skip(f"{self.rule.name}: {outcome.skipped}")
        if outcome.violations:
            raise ContractBroken(self.rule.summary, outcome.violations)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """The violations and their falsifying examples, without a traceback."""
        if isinstance(excinfo.value, ContractBroken):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Where the test comes from, for pytest's report: `kind rule[configN]`."""
        # Not a suffix of the node id: pytest would show the kind's dots as `::`.
        return self.path, None, f"{self.subject.kind} {self.name}"


class ExamplesItem(pytest.Item):
    """Fails: the kind's `examples` attribute is not a sequence of config mappings."""

    def __init__(self, *, violation: Violation, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.violation = violation

    def runtest(self) -> None:
        """Report the malformed examples."""
        raise ContractBroken("the factory's examples are config mappings", [self.violation])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """The problem, without a traceback."""
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Where the test comes from, for pytest's report: `kind examples`."""
        return self.path, None, f"{self.violation.kind} {self.name}"


def _kind_items(parent: KindCollector, pack_kind: PackKind, registry: Registry) -> list[Any]:
    items: list[Any] = []
    examples = pack_kind.examples_violation()
    if examples is not None:
        items.append(ExamplesItem.from_parent(parent, name=EXAMPLES_RULE, violation=examples))
    for rule, subject, index in pack_kind.checks(registry):
        name = rule.name if index is None else f"{rule.name}[config{index}]"
        items.append(ContractItem.from_parent(parent, name=name, rule=rule, subject=subject))
    return items


def pack_items(session: pytest.Session, distribution: str) -> list[Any]:
    """Every contract test of the installed `distribution`; a usage error when it is not
    installed or registers no kind."""
    try:
        pack = find_pack(distribution)
    except metadata().PackageNotFoundError:
        raise pytest.UsageError(
            f"--gradekit-pack {distribution}: that distribution is not installed; install it "
            "in this environment (pip install -e .) or check its name (pip list)"
        ) from None
    if not pack.kinds:
        raise pytest.UsageError(
            f"--gradekit-pack {distribution}: {pack.label} registers no grader kinds; declare "
            "them as entry points of group 'gradekit.graders'"
        )
    registry = Registry()
    node = f"gradekit-pack/{pack.name}"
    parent = PackCollector.from_parent(session, name=node, nodeid=node)
    items: list[Any] = []
    for pack_kind in pack.kinds:
        kind_node = KindCollector.from_parent(
            parent, name=pack_kind.kind, nodeid=f"{node}::{pack_kind.kind}"
        )
        items.extend(_kind_items(kind_node, pack_kind, registry))
    return items
