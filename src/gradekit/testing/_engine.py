"""Running the contract's rules: one rule on one subject, hypothesis searching the samples.

A sample rule is a search: `hypothesis.find` looks for an example that breaks the rule and
shrinks it to a minimal one, which becomes the violation's falsifying example. Its settings
are the kit's modest defaults (50 examples, no deadline, no example database), or the
hypothesis profile named `gradekit` when one is registered, or what the caller passes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

import attrs
import hypothesis
from hypothesis import strategies as st
from hypothesis.errors import Flaky, HypothesisException, InvalidArgument, NoSuchExample

from gradekit._registry import Registry, default_registry
from gradekit._types import Sample, error_text
from gradekit.testing._rules import RULES, Rule
from gradekit.testing._strategies import samples as default_samples
from gradekit.testing._subject import Broken, NotApplicable, Subject
from gradekit.testing._violation import Violation

__all__ = ["PROFILE", "Outcome", "check_grader", "contract_settings", "run_rule"]

PROFILE: Final = "gradekit"
"""The hypothesis profile the kit uses instead of its defaults, when one is registered."""

DEFAULT_SETTINGS: Final = hypothesis.settings(max_examples=50, deadline=None, database=None)


def contract_settings(override: hypothesis.settings | None = None) -> hypothesis.settings:
    """The settings a contract search uses: `override`, else the registered `gradekit`
    profile, else 50 examples with no deadline and no example database."""
    if override is not None:
        return override
    try:
        return hypothesis.settings.get_profile(PROFILE)
    except InvalidArgument:
        return DEFAULT_SETTINGS


@attrs.frozen
class Outcome:
    """What one rule gave on one subject: its violations, or why it was skipped."""

    rule: Rule
    violations: tuple[Violation, ...] = ()
    skipped: str | None = None


def _before(example: Any) -> Any:
    # The example as it was before grading: a grader that mutates samples must not make its
    # own falsifying example lie.
    try:
        return copy.deepcopy(example)
    except Exception:
        return example


def _search(
    rule: Rule, subject: Subject, state: Any, settings: hypothesis.settings
) -> Violation | None:
    strategy: st.SearchStrategy[Any] = subject.samples
    if rule.pairs:
        strategy = st.tuples(subject.samples, subject.samples)
    found: list[tuple[Any, str]] = []

    def breaks(example: Any) -> bool:
        before = _before(example)
        message = rule.check(state, example)
        if message is None:
            return False
        found[:] = [(before, message)]
        return True

    key = f"gradekit-contract:{subject.kind}:{rule.name}:{dict(subject.config)!r}".encode()
    note = ""
    try:
        hypothesis.find(strategy, breaks, settings=settings, database_key=key)
    except NoSuchExample:
        return None
    except Flaky:
        note = " (flaky: the example did not break the rule again when replayed)"
    except HypothesisException as error:
        if not found:
            message = f"hypothesis could not search: {error_text(error)}"
            return Violation(subject.kind, rule.name, message, None, subject.config)
        note = f" (hypothesis stopped: {error_text(error)})"
    example, message = found[0]
    return Violation(subject.kind, rule.name, message + note, example, subject.config)


def run_rule(rule: Rule, subject: Subject, settings: hypothesis.settings) -> Outcome:
    """Check one rule on one subject."""
    config = None if rule.scope == "kind" else subject.config
    if rule.scope != "sample":
        try:
            finding = rule.check(subject)
        except NotApplicable as skip:
            return Outcome(rule, skipped=skip.reason)
        if finding is None:
            return Outcome(rule)
        message, example = finding
        return Outcome(rule, (Violation(subject.kind, rule.name, message, example, config),))
    try:
        grader = subject.create()
    except Exception as error:
        message = f"cannot check: creating the grader failed: {error_text(error)}"
        return Outcome(rule, (Violation(subject.kind, rule.name, message, config, config),))
    assert rule.prepare is not None
    try:
        state = rule.prepare(subject, grader)
    except NotApplicable as skip:
        return Outcome(rule, skipped=skip.reason)
    except Broken as broken:
        violation = Violation(subject.kind, rule.name, broken.message, broken.example, config)
        return Outcome(rule, (violation,))
    found = _search(rule, subject, state, settings)
    return Outcome(rule, () if found is None else (found,))


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
