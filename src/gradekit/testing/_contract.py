"""GraderContract: the contract as a pytest test class a pack subclasses in its own tests.

    class TestRouge(GraderContract):
        kind = "acme.rouge"
        configs = ({"minimum": 0.5}, {"tokenizer": "chars"})

Each rule of `_rules.RULES` is one test method, `test_<rule>`, run once per example config for
the rules about configs and grading. A rule about an ability the kind lacks (no `agrade`, not
inline) is skipped, not failed. A failure lists each violation with its falsifying example.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from gradekit.testing._engine import contract_settings, run_rule
from gradekit.testing._rules import RULES, Rule
from gradekit.testing._samples import samples
from gradekit.testing._subject import Subject

if TYPE_CHECKING:
    import hypothesis
    from hypothesis.strategies import SearchStrategy

    from gradekit._types import Sample
    from gradekit.registry.registry import Registry

__all__ = ["GraderContract"]

# (class, id of the config) -> (the config, its subject); the config is kept so its id stays
# its own while the entry lives.
_SUBJECTS: dict[tuple[type, int], tuple[Any, Subject]] = {}


class GraderContract:
    """The grader contract as test methods; subclass it as `Test...` and fill in the blanks.

    - `kind` (required): the kind to check, such as `"acme.rouge"`.
    - `configs`: example configs (option mappings) to create graders from; default `({},)`.
    - `sample_strategy`: a hypothesis strategy of `gradekit.Sample` (default `samples()`).
    - `deterministic`, `picklable`: True or False overrides what the grader declares about
      itself (its own `deterministic` / `picklable` attributes, True when absent); a grader
      that is not deterministic is not held to giving the same result twice, one that is not
      picklable is not pickled.
    - `factory`: the object the kind must resolve to (default: any).
    - `registry`: the registry to resolve the kind through (default: gradekit's, which
      sees every installed pack).
    - `hypothesis_settings`: hypothesis settings for the searches (default: the `gradekit`
      profile when registered, else 50 examples and no deadline).
    """

    kind: ClassVar[str]
    configs: ClassVar[Sequence[Mapping[str, Any]]] = ({},)
    sample_strategy: ClassVar[SearchStrategy[Sample] | None] = None
    deterministic: ClassVar[bool | None] = None
    picklable: ClassVar[bool | None] = None
    factory: ClassVar[Any] = None
    registry: ClassVar[Registry | None] = None
    hypothesis_settings: ClassVar[hypothesis.settings | None] = None

    def pytest_generate_tests(self, metafunc: Any) -> None:
        """Run every test that takes `config` once per example config."""
        if "config" in metafunc.fixturenames:
            configs = list(self.configs)
            ids = [f"config{index}" for index in range(len(configs))]
            metafunc.parametrize("config", configs, ids=ids)

    def contract_subject(self, config: Mapping[str, Any] | None = None) -> Subject:
        """What the rules check: this class's kind and declarations, with `config`.

        One subject per class and example config, kept for the class's other tests: the
        rules about grading are searched together, once per subject.
        """
        key = (type(self), id(config))
        kept = _SUBJECTS.get(key)
        if kept is not None and kept[0] is config:
            return kept[1]
        subject = self._new_subject(config)
        _SUBJECTS[key] = (config, subject)
        return subject

    def _new_subject(self, config: Mapping[str, Any] | None) -> Subject:
        kind = getattr(self, "kind", None)
        if not isinstance(kind, str) or not kind:
            raise TypeError(
                f"{type(self).__name__} subclasses GraderContract but sets no kind; add "
                "`kind = 'acme.rouge'` (the kind to check) to the class"
            )
        from gradekit.registry.registry import default_registry

        return Subject(
            kind,
            {} if config is None else config,
            self.registry if self.registry is not None else default_registry,
            self.sample_strategy if self.sample_strategy is not None else samples(),
            self.factory,
            self.deterministic,
            self.picklable,
        )

    def check_contract_rule(self, rule: Rule, config: Mapping[str, Any] | None = None) -> None:
        """Run one rule: skip when it does not apply, fail with every violation it finds."""
        import pytest

        settings = contract_settings(self.hypothesis_settings)
        outcome = run_rule(rule, self.contract_subject(config), settings)
        if outcome.skipped is not None:
            pytest.skip(f"{rule.name}: {outcome.skipped}")
        if outcome.violations:
            text = "\n\n".join(str(violation) for violation in outcome.violations)
            pytest.fail(f"{rule.summary}: broken\n{text}", pytrace=False)


def _kind_test(rule: Rule) -> Callable[[GraderContract], None]:
    def test(self: GraderContract) -> None:
        self.check_contract_rule(rule)

    return test


def _config_test(rule: Rule) -> Callable[[GraderContract, Mapping[str, Any]], None]:
    def test(self: GraderContract, config: Mapping[str, Any]) -> None:
        self.check_contract_rule(rule, config)

    return test


# One test method per rule, so the rules live in one place and each is reported on its own.
for _rule in RULES:
    _test: Callable[..., None] = _kind_test(_rule) if _rule.scope == "kind" else _config_test(_rule)
    _test.__name__ = f"test_{_rule.name}"
    _test.__qualname__ = f"GraderContract.{_test.__name__}"
    _test.__doc__ = f"Contract: {_rule.summary}."
    setattr(GraderContract, _test.__name__, _test)
del _rule, _test
