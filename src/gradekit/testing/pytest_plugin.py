"""gradekit's pytest plugin: suite files as tests (`pytest suite.yaml`), and
`pytest --gradekit-pack DIST`, which checks an installed grader pack.

Registered through the `pytest11` entry point, so pytest loads it in every run where gradekit
is installed: importing it only defines hooks. The registry, hypothesis and the contract are
imported when `--gradekit-pack` is given, the suite loader and the runner when a suite file is
collected, never otherwise.

A YAML file named on the command line (`pytest suite.yaml`), and every file whose name matches
a pattern of the ini option `gradekit_suites` (`gradekit_suites = *.suite.yaml`), is a suite:
each case one test (`gradekit.testing._grading`). No other YAML file is collected.

With `--gradekit-pack DIST` (repeatable), every kind the distribution DIST registers (entry
points of group `gradekit.graders` whose distribution is DIST) gets one test per contract
rule and example config (from the factory's `examples` attribute, else `{}`), beside the
tests pytest collects as usual; `-k` selects among them as among any tests: one collector per
pack and per kind, one item per contract rule and example config, each running the rule
through `gradekit.testing._contract`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from gradekit.registry.registry import Registry
    from gradekit.testing._packs import PackKind
    from gradekit.testing._rules import Rule
    from gradekit.testing._subject import Subject, Violation

__all__ = ["pytest_addoption", "pytest_collect_file", "pytest_collection_modifyitems"]

SUITE_SUFFIXES = (".yaml", ".yml")
"""The suffixes of a suite file named on the command line."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ini option `gradekit_suites` and `--gradekit-pack DIST`."""
    parser.addini(
        "gradekit_suites",
        type="args",
        default=[],
        help="glob patterns of gradekit suite files to collect, each case a test (e.g. "
        "*.suite.yaml, or evals/*.yaml: matched from the right); a YAML file named on the "
        "command line is always collected as a suite",
    )
    group = parser.getgroup("gradekit", "gradekit grader packs")
    group.addoption(
        "--gradekit-pack",
        action="append",
        default=[],
        metavar="DIST",
        dest="gradekit_pack",
        help="run gradekit's grader contract over every kind the installed distribution DIST "
        "registers (repeat for several distributions)",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A suite file (named on the command line, or matching `gradekit_suites`) as a
    collector of its cases; None for any other file."""
    if not is_suite_file(file_path, parent.session, parent.config):
        return None
    from gradekit.testing._grading import SuiteFile

    return SuiteFile.from_parent(parent, path=file_path)


def is_suite_file(path: Path, session: pytest.Session, config: pytest.Config) -> bool:
    """Whether pytest should collect `path` as a gradekit suite."""
    if path.suffix in SUITE_SUFFIXES and session.isinitpath(path):
        return True
    # Matched from the right, as pathlib does: `*.suite.yaml`, `evals/*.yaml`.
    return any(path.match(pattern) for pattern in config.getini("gradekit_suites"))


# tryfirst: the contract's items are added before `-k` and `-m` deselect among all items.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the contract's tests for each `--gradekit-pack` distribution."""
    distributions = config.getoption("gradekit_pack")
    if not distributions:
        return
    for distribution in distributions:
        items.extend(pack_items(session, distribution))


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
        from gradekit.testing._contract import contract_settings, run_rule

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
    from gradekit.testing._packs import EXAMPLES_RULE

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
    from gradekit.registry.plugins import metadata
    from gradekit.registry.registry import Registry
    from gradekit.testing._packs import find_pack

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
