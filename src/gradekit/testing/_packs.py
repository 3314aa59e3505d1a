"""An installed grader pack: the kinds a distribution registers and the examples it declares.

Shared by the pytest plugin (`--gradekit-pack DIST`) and `gradekit check-pack DIST`. A kind's
example configs come from the `examples` attribute of its factory (a sequence of config
mappings); a kind that declares none is checked with the empty config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

import attrs

from gradekit.registry.plugins import metadata
from gradekit.registry.registry import ENTRY_POINT_GROUP, Registry
from gradekit.testing._rules import RULES, Rule
from gradekit.testing._strategies import samples
from gradekit.testing._subject import Subject, Violation

__all__ = ["EXAMPLES_RULE", "Check", "Pack", "PackKind", "find_pack"]

EXAMPLES_RULE: Final = "examples"
"""The name under which a malformed `examples` attribute is reported."""

_NO_EXAMPLES: Final = (
    "\n(the factory declares no `examples`, so the kind is checked with {}: give the factory "
    "an `examples` attribute, a sequence of configs that it accepts)"
)


@attrs.frozen
class PackKind:
    """One kind of a pack: its factory (None when it cannot be loaded), its example configs,
    and what is wrong with its `examples` attribute, if anything."""

    kind: str
    value: str
    factory: Any
    configs: tuple[Mapping[str, Any], ...]
    examples_problem: str | None = None

    def checks(self, registry: Registry) -> list[Check]:
        """What to check: the rules about the kind once, then every other rule once per
        example config (only the former when the factory cannot be loaded)."""
        itself = Subject(self.kind, {}, registry, samples(), factory=self.factory)
        checks = [Check(rule, itself, None) for rule in RULES if rule.scope == "kind"]
        if self.factory is None:
            return checks
        hint = "" if hasattr(self.factory, "examples") else _NO_EXAMPLES
        for index, config in enumerate(self.configs):
            subject = Subject(
                self.kind, config, registry, samples(), factory=self.factory, hint=hint
            )
            checks.extend(Check(rule, subject, index) for rule in RULES if rule.scope != "kind")
        return checks

    def examples_violation(self) -> Violation | None:
        """The violation of a malformed `examples` attribute, if it is malformed."""
        if self.examples_problem is None:
            return None
        declared = getattr(self.factory, "examples", None)
        return Violation(self.kind, EXAMPLES_RULE, self.examples_problem, declared)


class Check(NamedTuple):
    """One rule to run on one subject; `config_index` numbers the example config (None for
    the rules about the kind)."""

    rule: Rule
    subject: Subject
    config_index: int | None


@attrs.frozen
class Pack:
    """An installed distribution and the kinds it registers (entry points of
    `gradekit.graders`), sorted by kind."""

    name: str
    version: str
    kinds: tuple[PackKind, ...]

    @property
    def label(self) -> str:
        """`name version`, as messages show it."""
        return f"{self.name} {self.version}"


def _examples(factory: Any) -> tuple[tuple[Mapping[str, Any], ...], str | None]:
    declared = getattr(factory, "examples", None)
    if declared is None:
        return ({},), None
    if isinstance(declared, (str, bytes, Mapping)) or not isinstance(declared, Sequence):
        return (), f"examples must be a sequence of config mappings, got {declared!r:.120}"
    bad = [item for item in declared if not isinstance(item, Mapping)]
    if bad:
        return (), f"examples must hold config mappings, got {bad[0]!r:.120}"
    if not declared:
        return (), "examples is empty: declare at least one config (or remove it for {})"
    return tuple(declared), None


def _kind(entry_point: Any) -> PackKind:
    try:
        factory = entry_point.load()
    except Exception:
        # The rule `resolves` reports why, through the registry, naming the distribution.
        return PackKind(entry_point.name, entry_point.value, None, ())
    configs, problem = _examples(factory)
    return PackKind(entry_point.name, entry_point.value, factory, configs, problem)


def find_pack(distribution: str) -> Pack:
    """The installed distribution named `distribution` and its kinds.

    Raises `importlib.metadata.PackageNotFoundError` when it is not installed.
    """
    found = metadata().distribution(distribution)
    entry_points = [ep for ep in found.entry_points if ep.group == ENTRY_POINT_GROUP]
    kinds = tuple(_kind(ep) for ep in sorted(entry_points, key=lambda ep: ep.name))
    return Pack(found.metadata["Name"], found.version, kinds)
