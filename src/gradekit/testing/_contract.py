"""The contract, run: one rule on one subject, hypothesis searching the samples; and its
two front doors, `check_grader(kind, config)` (returns the violations) and `GraderContract`
(the contract as a pytest test class a pack subclasses in its own tests).

    class TestRouge(GraderContract):
        kind = "acme.rouge"
        configs = ({"minimum": 0.5}, {"tokenizer": "chars"})

Each rule of `_rules.RULES` is one test method of GraderContract, `test_<rule>`, run once per
example config for the rules about configs and grading. A rule about an ability the kind lacks
(no `agrade`, not inline) is skipped, not failed. A failure lists each violation with its
falsifying example.

The rules about grading are one search per subject: each drawn sample is checked against
every such rule not broken yet (`_explore`). Only a rule that broke is searched again, alone,
with `hypothesis.find`, which shrinks its example to a minimal one: the violation's
falsifying example. Every rule grades its own deep copy of the sample, so a grader that
changes samples neither hides a violation from the next rule nor alters the example shown.

The settings are the caller's, else the hypothesis profile named `gradekit` when one is
registered, else the kit's modest defaults (50 examples, no example database); no deadline
ever applies.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

import attrs
import hypothesis
from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st
from hypothesis.errors import (
    Flaky,
    HypothesisException,
    HypothesisWarning,
    InvalidArgument,
    NoSuchExample,
)

from gradekit.core.types import Sample, error_text
from gradekit.registry.registry import Registry, default_registry
from gradekit.testing._rules import RULES, Rule
from gradekit.testing._strategies import samples as default_samples
from gradekit.testing._subject import Broken, NotApplicable, Subject, Violation

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["PROFILE", "GraderContract", "Outcome", "check_grader", "contract_settings", "run_rule"]


PROFILE: Final = "gradekit"
"""The hypothesis profile the kit uses instead of its defaults, when one is registered."""

DEFAULT_EXAMPLES: Final = 50


def contract_settings(override: hypothesis.settings | None = None) -> hypothesis.settings:
    """The settings a contract search uses: `override`, else the registered `gradekit`
    profile, else the loaded profile with 50 examples and no example database."""
    if override is not None:
        return override
    try:
        return hypothesis.settings.get_profile(PROFILE)
    except InvalidArgument:
        # Made now, not at import: the rest (derandomize, verbosity) follows the profile
        # loaded when the contract runs.
        return hypothesis.settings(max_examples=DEFAULT_EXAMPLES, database=None)


@attrs.frozen
class Outcome:
    """What one rule gave on one subject: its violations, or why it was skipped."""

    rule: Rule
    violations: tuple[Violation, ...] = ()
    skipped: str | None = None


def _pristine(example: Any) -> Any:
    # A copy for one rule to grade: a grader that mutates samples must neither hide a
    # violation from the rules after it nor make the falsifying example lie.
    try:
        return copy.deepcopy(example)
    except Exception:
        return example


def _settings(base: hypothesis.settings) -> hypothesis.settings:
    # Health checks judge a test's strategy; here the strategy is the kit's own. Deadlines
    # judge speed, which is not part of the contract. The explain phase (which parts of an
    # example do not matter) costs more than the whole search and is not reported.
    phases = [phase for phase in base.phases if phase is not Phase.explain]
    return hypothesis.settings(
        base, deadline=None, suppress_health_check=list(HealthCheck), phases=phases
    )


def _cannot_search(rule: Rule, subject: Subject, error: HypothesisException) -> Outcome:
    message = f"hypothesis could not search: {error_text(error)}"
    return Outcome(rule, (Violation(subject.kind, rule.name, message, None, subject.config),))


def _checked(rule: Rule, state: Any, example: Any) -> str | None:
    """`rule.check` on a pristine copy of `example`; a check that raises on what the grader
    gave (details whose `==` or `repr` fail) is a violation of the rule, not a crash."""
    try:
        message: str | None = rule.check(state, _pristine(example))
    except Exception as error:
        return f"checking this rule raised {error_text(error)}"
    return message


def _shrink(
    rule: Rule, subject: Subject, state: Any, settings: hypothesis.settings
) -> tuple[Any, str] | None:
    """A minimal example breaking `rule`, searched for that rule alone; None if not found."""
    strategy = _strategy(subject, pairs=rule.pairs)
    found: list[tuple[Any, str]] = []

    def breaks(example: Any) -> bool:
        message = _checked(rule, state, example)
        if message is None:
            return False
        found[:] = [(example, message)]
        return True

    key = f"gradekit-contract:{subject.kind}:{rule.name}:{dict(subject.config)!r}".encode()
    note = ""
    try:
        with warnings.catch_warnings():
            # Replaying a huge falsifying text makes hypothesis warn about its repr.
            warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)
            hypothesis.find(strategy, breaks, settings=_settings(settings), database_key=key)
    except NoSuchExample:
        return None
    except Flaky:
        note = " (flaky: the example did not break the rule again when replayed)"
    except HypothesisException as error:
        if not found:
            raise
        note = f" (hypothesis stopped: {error_text(error)})"
    example, message = found[0]
    return example, message + note


def _strategy(subject: Subject, *, pairs: bool) -> st.SearchStrategy[Any]:
    return st.tuples(subject.samples, subject.samples) if pairs else subject.samples


def _explore(
    active: Sequence[Rule],
    states: Mapping[str, Any],
    subject: Subject,
    settings: hypothesis.settings,
) -> dict[str, tuple[Any, str]]:
    """One search for all `active` rules at once: each drawn example is checked against
    every rule not broken yet. Returns, for each broken rule, the first example and message."""
    pairs = any(rule.pairs for rule in active)
    broken: dict[str, tuple[Any, str]] = {}

    def explore(example: Any) -> None:
        for rule in active:
            if rule.name in broken:
                continue
            argument = example if rule.pairs or not pairs else example[0]
            message = _checked(rule, states[rule.name], argument)
            if message is not None:
                broken[rule.name] = (argument, message)

    hypothesis.given(_strategy(subject, pairs=pairs))(_settings(settings)(explore))()
    return broken


def _sample_outcomes(
    rules: Sequence[Rule], subject: Subject, settings: hypothesis.settings
) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}
    config = subject.config
    try:
        grader = subject.create()
    except Exception as error:
        message = f"cannot check: creating the grader failed: {error_text(error)}"
        for rule in rules:
            outcomes[rule.name] = Outcome(
                rule, (Violation(subject.kind, rule.name, message, config, config),)
            )
        return outcomes
    states: dict[str, Any] = {}
    for rule in rules:
        assert rule.prepare is not None
        try:
            states[rule.name] = rule.prepare(subject, grader)
        except NotApplicable as skip:
            outcomes[rule.name] = Outcome(rule, skipped=skip.reason)
        except Broken as failure:
            violation = Violation(subject.kind, rule.name, failure.message, failure.example, config)
            outcomes[rule.name] = Outcome(rule, (violation,))
    active = [rule for rule in rules if rule.name in states]
    try:
        broken = _explore(active, states, subject, settings) if active else {}
    except HypothesisException as error:
        outcomes.update({rule.name: _cannot_search(rule, subject, error) for rule in active})
        return outcomes
    for rule in active:
        if rule.name not in broken:
            outcomes[rule.name] = Outcome(rule)
            continue
        try:
            shrunk = _shrink(rule, subject, states[rule.name], settings)
        except HypothesisException as error:
            outcomes[rule.name] = _cannot_search(rule, subject, error)
            continue
        if shrunk is None:  # broken once, not again in the search: report the first example
            example, message = broken[rule.name]
            shrunk = example, message + " (found once; a second search to shrink it did not)"
        example, message = shrunk
        violation = Violation(subject.kind, rule.name, message, example, config)
        outcomes[rule.name] = Outcome(rule, (violation,))
    return outcomes


SAMPLE_RULES: Final = tuple(rule for rule in RULES if rule.scope == "sample")
_NAMESPACED: Final = next(rule for rule in RULES if rule.name == "namespaced")


def run_rule(rule: Rule, subject: Subject, settings: hypothesis.settings) -> Outcome:
    """Check one rule on one subject.

    The rules about grading are searched together, once per subject: the first of them to
    run searches for all and keeps their outcomes on the subject for the others. Every rule
    but `namespaced` is skipped for an undotted kind from outside gradekit: the registry
    refuses such a kind, so nothing else can be checked until it is renamed.
    """
    if rule.name != "namespaced" and _NAMESPACED.check(subject) is not None:
        return Outcome(rule, skipped="the kind has no namespace (see the namespaced rule)")
    if rule.scope == "sample":
        memo = subject.sample_outcomes
        if not memo:
            memo.update(_sample_outcomes(SAMPLE_RULES, subject, settings))
        outcome: Outcome = memo[rule.name]
        return outcome
    config = None if rule.scope == "kind" else subject.config
    try:
        finding = rule.check(subject)
    except NotApplicable as skip:
        return Outcome(rule, skipped=skip.reason)
    if finding is None:
        return Outcome(rule)
    message, example = finding
    return Outcome(rule, (Violation(subject.kind, rule.name, message, example, config),))


def run_rules(
    subject: Subject, settings: hypothesis.settings, *, kind_rules: bool = True
) -> list[Outcome]:
    """Every rule on one subject; when the example config cannot even make a grader, the
    rules that need one are not run (their violations would all say the same)."""
    outcomes: list[Outcome] = []
    for rule in RULES:
        if rule.scope == "kind" and not kind_rules:
            continue
        outcome = run_rule(rule, subject, settings)
        outcomes.append(outcome)
        if rule.name == "creates" and outcome.violations:
            break
    return outcomes


def check_grader(
    kind: str,
    config: Mapping[str, Any] | None = None,
    *,
    samples: st.SearchStrategy[Sample] | None = None,
    registry: Registry | None = None,
    settings: hypothesis.settings | None = None,
    deterministic: bool | None = None,
    picklable: bool | None = None,
    factory: Any = None,
) -> list[Violation]:
    """Check the contract of `kind` created from `config`; returns every violation found,
    each with its falsifying example (an empty list when the kind keeps the contract).

    `samples` draws the samples to grade (default: `samples()`); `registry` resolves the
    kind (default: gradekit's, with every installed pack); `settings` are hypothesis settings
    (default: the `gradekit` profile when registered, else 50 examples, no deadline).
    `deterministic` and `picklable` override what the grader declares about itself;
    `factory`, when given, is the object the kind must resolve to. Rules about abilities the
    grader lacks (no `agrade`, not inline) are skipped.
    """
    subject = Subject(
        kind,
        {} if config is None else config,
        default_registry if registry is None else registry,
        default_samples() if samples is None else samples,
        factory,
        deterministic,
        picklable,
    )
    outcomes = run_rules(subject, contract_settings(settings))
    return [violation for outcome in outcomes for violation in outcome.violations]


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

        return Subject(
            kind,
            {} if config is None else config,
            self.registry if self.registry is not None else default_registry,
            self.sample_strategy if self.sample_strategy is not None else default_samples(),
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
