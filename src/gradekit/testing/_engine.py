"""Running the contract's rules: one rule on one subject, hypothesis searching the samples.

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
from collections.abc import Mapping, Sequence
from typing import Any, Final

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

from gradekit._types import Sample, error_text
from gradekit.registry.registry import Registry, default_registry
from gradekit.testing._rules import RULES, Rule
from gradekit.testing._samples import samples as default_samples
from gradekit.testing._subject import Broken, NotApplicable, Subject
from gradekit.testing._violation import Violation

__all__ = ["PROFILE", "Outcome", "check_grader", "contract_settings", "run_rule"]

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
