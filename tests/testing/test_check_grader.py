"""check_grader finds each deliberately broken grader of the installed acme-broken pack, with a
falsifying example that really breaks it, and finds nothing in the acme-clean pack."""

from __future__ import annotations

import copy
import pickle
import re
import threading
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from gradekit import ConfigError, GradeResult, Registry, Sample
from gradekit.testing import Violation, check_grader, samples


def rules(violations: list[Violation]) -> list[str]:
    return sorted(violation.rule for violation in violations)


def words(value: Any) -> list[str]:
    return ("" if value is None else str(value)).split()


def test_a_grader_that_raises_on_empty_text(pack_registry: Registry) -> None:
    (violation,) = check_grader("acme.first_word", registry=pack_registry)
    assert (violation.kind, violation.rule) == ("acme.first_word", "well_formed")
    assert violation.message.startswith("grade raised IndexError: list index out of range (at ")
    assert "acme_broken/__init__.py" in violation.message
    assert violation.config == {}
    assert words(violation.example.output) == []
    with pytest.raises(IndexError):
        pack_registry.create("acme.first_word").grade(violation.example)
    assert str(violation).splitlines()[-1] == f"  Falsifying example: {_shown(violation)}"


def _shown(violation: Violation) -> str:
    from gradekit.testing._subject import show

    return show(violation.example)


def test_a_grader_that_scores_above_one(pack_registry: Registry) -> None:
    (violation,) = check_grader("acme.token_f1", registry=pack_registry)
    assert violation.rule == "well_formed"
    assert "grade raised ValueError: score must be a finite number in [0, 1], got " in (
        violation.message
    )
    with pytest.raises(ValueError, match=r"score must be a finite number in \[0, 1\]"):
        pack_registry.create("acme.token_f1").grade(violation.example)
    # The grader's other rules hold: only the score is wrong.
    assert set(words(violation.example.output)) & set(words(violation.example.expected))


def test_a_grader_that_is_not_deterministic(pack_registry: Registry) -> None:
    violations = check_grader("acme.judge", registry=pack_registry)
    assert rules(violations) == ["deterministic", "pickles"]
    deterministic = next(v for v in violations if v.rule == "deterministic")
    assert re.fullmatch(
        r"grading the same sample twice gave (passed|score) \S+ then \S+", deterministic.message
    )
    grader = pack_registry.create("acme.judge")
    assert grader.grade(deterministic.example).score != grader.grade(deterministic.example).score
    # Declared not deterministic, it keeps the contract.
    assert check_grader("acme.judge", registry=pack_registry, deterministic=False) == []


def test_a_grader_that_changes_its_sample(pack_registry: Registry) -> None:
    (violation,) = check_grader("acme.normalised", registry=pack_registry)
    assert violation.rule == "leaves_sample"
    assert violation.message.startswith("grading changed the sample's metadata: it was {")
    assert "it is now {" in violation.message and "'normalised_output': " in violation.message
    # The falsifying example is the sample as it was before grading; grading changes it.
    sample = copy.deepcopy(violation.example)
    assert "normalised_output" not in sample.metadata
    pack_registry.create("acme.normalised").grade(sample)
    assert "normalised_output" in sample.metadata


def test_a_grader_that_does_not_pickle(pack_registry: Registry) -> None:
    (violation,) = check_grader("acme.locked", registry=pack_registry)
    assert violation.rule == "pickles"
    assert violation.message.startswith(
        "the grader does not pickle: TypeError: cannot pickle '_thread.lock' object; "
    )
    assert violation.example == {}
    with pytest.raises(TypeError):
        pickle.dumps(pack_registry.create("acme.locked"))
    assert check_grader("acme.locked", registry=pack_registry, picklable=False) == []


def test_a_factory_that_ignores_unknown_and_wrong_options(pack_registry: Registry) -> None:
    violations = check_grader("acme.lenient", {"threshold": 0.5}, registry=pack_registry)
    assert rules(violations) == ["unknown_option", "wrong_type"]
    unknown, wrong = sorted(violations, key=lambda v: v.rule)
    assert unknown.message == (
        "the unknown option 'no_such_option_of_the_contract' was accepted: a ConfigError "
        "naming 'no_such_option_of_the_contract' was expected"
    )
    assert unknown.example == {"threshold": 0.5, "no_such_option_of_the_contract": True}
    pack_registry.create("acme.lenient", config=unknown.example)  # accepted: the bug
    assert wrong.example == {"threshold": "abc"}
    # Where the factory raised: the pack's own line, not gradekit's frames.
    assert re.fullmatch(
        r"option 'threshold' set to 'abc' \(str\) raised ValueError: could not convert string "
        r"to float: 'abc' \(at \S+/acme_broken/__init__\.py:\d+ in lenient\), not a "
        r"ConfigError naming 'threshold'",
        wrong.message,
    ), wrong.message


def test_an_inline_grader_that_does_io(pack_registry: Registry) -> None:
    (violation,) = check_grader("acme.logged", registry=pack_registry)
    assert violation.rule == "inline_pure"
    assert violation.message.startswith("an inline grader must be pure, but grading did I/O: open(")
    assert "'a')" in violation.message
    sample, other = violation.example
    assert isinstance(sample, Sample) and isinstance(other, Sample)


def test_an_undotted_third_party_kind(pack_registry: Registry) -> None:
    (violation,) = check_grader("shout", registry=pack_registry)
    assert violation.rule == "namespaced"
    assert violation.message == (
        "kind 'shout' from acme-broken (acme_broken:Shout) has no namespace: names without a "
        "dot are gradekit's own kinds; name it after your pack, such as 'acme.shout'"
    )
    assert violation.example == "shout"
    assert violation.config is None


@pytest.mark.parametrize(
    ("kind", "config"),
    [("acme.shout", {}), ("acme.shout", {"min_length": 3}), ("acme.length", {"limit": 5})],
)
def test_kinds_that_keep_the_contract_have_no_violation(
    pack_registry: Registry, kind: str, config: dict[str, Any]
) -> None:
    assert check_grader(kind, config, registry=pack_registry) == []


def test_a_config_the_kind_rejects_is_one_violation(pack_registry: Registry) -> None:
    violations = check_grader("acme.token_f1", {"minimum": "x"}, registry=pack_registry)
    assert [(v.rule, v.example) for v in violations] == [("creates", {"minimum": "x"})]
    assert violations[0].message.startswith(
        "the factory rejected the example config: ConfigError: invalid options for kind"
    )


def test_an_unknown_kind_does_not_resolve() -> None:
    violations = check_grader("acme.nothing", registry=Registry(entry_points=False))
    assert rules(violations) == ["creates", "resolves"]
    resolves = next(v for v in violations if v.rule == "resolves")
    assert resolves.message.startswith(
        "the registry cannot resolve the kind: unknown grader kind 'acme.nothing'"
    )


# -- graders written here, for what the test packs do not show -----------------------------


class Tally:
    """A user object smuggled into metadata: freezing a sample leaves it as it is."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> Tally:
        copied = Tally()
        copied.seen = list(self.seen)
        return copied


@attrs.frozen
class Counting:
    """Records every grade in the sample's `tally` metadata object."""

    kind: ClassVar[str] = "acme.counting"
    name: str = attrs.field(kw_only=True, default="acme.counting")

    def grade(self, sample: Sample) -> GradeResult:
        tally = sample.metadata.get("tally")
        if isinstance(tally, Tally):
            tally.seen.append(str(sample.output))
        return GradeResult(self.kind, self.name, True, 1.0, "counted")


def test_a_mutable_object_smuggled_in_metadata_is_seen_changing() -> None:
    registry = Registry(entry_points=False)
    registry.register("acme.counting", Counting)
    with_tally = samples().map(lambda s: attrs.evolve(s, metadata={"tally": Tally()}))
    (violation,) = check_grader("acme.counting", registry=registry, samples=with_tally)
    assert violation.rule == "leaves_sample"
    assert violation.message.startswith("grading changed the sample's metadata: it was {'tally': ")
    assert violation.example.metadata["tally"].seen == []
    # Without such an object the same grader keeps the contract.
    assert check_grader("acme.counting", registry=registry) == []


@attrs.frozen
class Hurried:
    """Its agrade takes a shortcut that grade does not: it never fails an empty output."""

    kind: ClassVar[str] = "acme.hurried"
    name: str = attrs.field(kw_only=True, default="acme.hurried")

    def grade(self, sample: Sample) -> GradeResult:
        ok = bool(sample.output)
        return GradeResult(self.kind, self.name, ok, float(ok), "graded")

    async def agrade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "graded")


def test_a_factory_that_ignores_the_name_it_is_given() -> None:
    def factory(name: str, config: Any) -> Hurried:
        if config:
            raise ConfigError("no options", [])
        return Hurried()

    registry = Registry(entry_points=False)
    registry.register("acme.hurried", factory)
    violations = check_grader("acme.hurried", registry=registry, samples=st.just(Sample()))
    assert [v.rule for v in violations] == ["creates"]
    assert violations[0].message == (
        "created with name 'contract-grader', the grader is named 'acme.hurried': a factory "
        "must give its grader the name it is called with"
    )


@attrs.frozen
class Detached:
    """Its grade_blocking grades as grade does, but never looks at its cancel: it waits for
    its command (here, the test's `released` event) however long it takes."""

    kind: ClassVar[str] = "acme.detached"
    name: str = attrs.field(kw_only=True, default="acme.detached")
    released: ClassVar[threading.Event] = threading.Event()

    def grade(self, sample: Sample) -> GradeResult:
        ok = bool(sample.output)
        return GradeResult(self.kind, self.name, ok, float(ok), "graded")

    def grade_blocking(self, sample: Sample, cancel: threading.Event) -> GradeResult:
        if cancel.is_set():
            self.released.wait(60)
        return self.grade(sample)


def test_a_grade_blocking_that_ignores_its_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradekit.testing import _grading_rules

    monkeypatch.setattr(_grading_rules, "CANCEL_GRACE", 0.3)
    registry = Registry(entry_points=False)
    registry.register("acme.detached", Detached)
    try:
        violations = check_grader("acme.detached", registry=registry, samples=st.just(Sample()))
    finally:
        Detached.released.set()
    assert [v.rule for v in violations] == ["blocking_agrees"]
    assert violations[0].message == (
        "grade_blocking did not return within 0.3 s of its cancel being set: once cancel is "
        "set it must stop its work (kill its command) and return a result"
    )


@attrs.frozen
class Shortcut(Hurried):
    """Its grade_blocking never fails an empty output, where grade does."""

    kind: ClassVar[str] = "acme.shortcut"
    name: str = attrs.field(kw_only=True, default="acme.shortcut")

    def grade_blocking(self, sample: Sample, cancel: threading.Event) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "graded")

    async def agrade(self, sample: Sample) -> GradeResult:
        return self.grade(sample)


@pytest.mark.parametrize(
    ("grader", "rule", "method"),
    [(Hurried, "agrade_agrees", "agrade"), (Shortcut, "blocking_agrees", "grade_blocking")],
)
def test_another_way_of_grading_that_disagrees_with_grade(
    grader: Any, rule: str, method: str
) -> None:
    registry = Registry(entry_points=False)
    registry.register(grader.kind, grader)
    (violation,) = check_grader(grader.kind, registry=registry)
    assert violation.rule == rule
    assert violation.message == f"grade and {method} disagree: passed False then True"
    assert not violation.example.output


class Elementwise:
    """A value whose `==` compares item by item and whose truth is refused, as a numpy
    array's is: a pack's per-reference scores, put in details by mistake."""

    def __init__(self, items: list[float]) -> None:
        self.items = items

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> Any:
        theirs = getattr(other, "items", [])
        return Elementwise([float(a == b) for a, b in zip(self.items, theirs, strict=False)])

    def __bool__(self) -> bool:
        raise ValueError("the truth value of an array with more than one element is ambiguous")

    def __repr__(self) -> str:
        return f"array({self.items})"


@attrs.frozen
class ArrayDetails:
    kind: ClassVar[str] = "acme.array_details"
    name: str = attrs.field(kw_only=True, default="acme.array_details")

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(
            self.kind, self.name, True, 1.0, "ok", {"scores": Elementwise([0.5, 0.7])}
        )


def test_details_that_are_not_json_and_not_comparable_are_a_violation_not_a_crash() -> None:
    registry = Registry(entry_points=False)
    registry.register("acme.array_details", ArrayDetails)
    violations = check_grader("acme.array_details", registry=registry)
    assert "well_formed" in rules(violations)
    (well_formed,) = [v for v in violations if v.rule == "well_formed"]
    assert "$.scores" in well_formed.message
    assert "Elementwise" in well_formed.message


@attrs.frozen
class LocalRouge:
    kind: ClassVar[str] = "rouge"
    name: str = attrs.field(kw_only=True, default="rouge")

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "ok", {"out": len(str(sample.output))})


def test_an_undotted_kind_registered_in_code_is_checked_like_any_other() -> None:
    # Code may register any name (docs/writing-a-grader.md): only a pack's entry point needs
    # a dot, so the rules are not skipped for it.
    registry = Registry(entry_points=False)
    registry.register("rouge", LocalRouge)
    assert check_grader("rouge", registry=registry) == []


@attrs.frozen
class Echo:
    """Copies the output into its details: a YAML `.nan` makes them not JSON."""

    kind: ClassVar[str] = "acme.echo"
    name: str = attrs.field(kw_only=True, default="acme.echo")

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "ok", {"output": sample.output})


def test_a_non_finite_output_copied_into_details_is_found() -> None:
    registry = Registry(entry_points=False)
    registry.register("acme.echo", Echo)
    # NaN and the infinities are one answer in 25 or so: 200 samples meet one. The search is
    # derandomized so that the same samples are drawn on every run (it met none in one run of
    # two under load when drawn at random).
    search = settings(max_examples=200, derandomize=True, database=None)
    violations = check_grader("acme.echo", registry=registry, settings=search)
    assert rules(violations) == ["well_formed"]
    assert "$.output is" in violations[0].message


def _silent_factory(name: str, config: Any) -> Any:
    """Takes option `k`, and refuses a bad one without naming it."""
    if config.get("k", 1) != 1 and not isinstance(config.get("k"), int):
        raise ConfigError("invalid options for kind 'acme.topk'")
    if set(config) - {"k"}:
        raise ConfigError("invalid options for kind 'acme.topk'")
    return LocalTopK(name=name)


@attrs.frozen
class LocalTopK:
    kind: ClassVar[str] = "acme.topk"
    name: str = attrs.field(kw_only=True, default="acme.topk")

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "ok")


def test_an_error_that_does_not_name_the_option_is_found_even_for_a_short_name() -> None:
    registry = Registry(entry_points=False)
    registry.register("acme.topk", _silent_factory)
    found = rules(check_grader("acme.topk", {"k": 1}, registry=registry))
    # "k" is a letter of "kind" and of "acme.topk": neither names the option.
    assert "wrong_type" in found


class Unshowable:
    """Neither compared nor shown: its `==` and its `repr` raise."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        raise TypeError("cannot compare")

    def __repr__(self) -> str:
        raise TypeError("cannot show")


@attrs.frozen
class UnshowableDetails:
    kind: ClassVar[str] = "acme.unshowable"
    name: str = attrs.field(kw_only=True, default="acme.unshowable")

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "ok", {"x": Unshowable()})


def test_a_check_that_raises_while_shrinking_is_still_a_violation() -> None:
    registry = Registry(entry_points=False)
    registry.register("acme.unshowable", UnshowableDetails)
    found = rules(check_grader("acme.unshowable", registry=registry))
    assert "well_formed" in found
