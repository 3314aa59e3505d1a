"""The registry on its own (the entry-point paths are in tests/registry/)."""

from __future__ import annotations

import pytest

import gradekit
from gradekit import (
    ConfigError,
    DuplicateKindError,
    GradeResult,
    Registry,
    Sample,
    UnknownKindError,
)


class Echo:
    """A plain grader made by a function factory."""

    kind = "echo"

    def __init__(self, name, config):
        self.name = name
        self.config = config

    def grade(self, sample):
        return GradeResult(self.kind, self.name, True, 1.0, str(sample.output))


def other_factory(name, config):
    return Echo(name, config)


@pytest.fixture
def registry():
    return Registry(entry_points=False)


def test_register_create_and_list(registry):
    registry.register("echo", Echo)
    registry.register("acme.echo", other_factory)
    assert registry.kinds() == ["acme.echo", "echo"]
    grader = registry.create("echo", config={"a": 1})
    assert (grader.name, grader.config) == ("echo", {"a": 1})
    assert registry.create("acme.echo", "named").grade(Sample(output="x")).message == "x"


def test_same_factory_twice_is_fine_another_is_a_loud_conflict(registry):
    registry.register("echo", Echo)
    registry.register("echo", Echo)
    with pytest.raises(DuplicateKindError) as caught:
        registry.register("echo", other_factory)
    assert caught.value.kind == "echo"
    assert "<registered> (test_registry:Echo)" in str(caught.value)
    assert "<registered> (test_registry:other_factory)" in str(caught.value)


@pytest.mark.parametrize("kind", ["Echo", "1x", "acme..x", "acme-x", "", "acme.X"])
def test_kind_names_are_checked(registry, kind):
    with pytest.raises(ConfigError, match="invalid kind name"):
        registry.register(kind, Echo)


def test_unknown_kind_lists_close_matches(registry):
    registry.register("numeric", Echo)
    registry.register("equality", Echo)
    with pytest.raises(UnknownKindError) as caught:
        registry.create("numerc")
    assert str(caught.value) == "unknown grader kind 'numerc'; did you mean 'numeric'?"
    assert caught.value.suggestions == ("numeric",)


def test_factory_returning_a_non_grader_is_a_config_error(registry):
    registry.register("bad", lambda name, config: object())
    with pytest.raises(ConfigError, match="returned object, which is not a grader"):
        registry.create("bad")


def test_unregister_forgets_registered_factories(registry):
    registry.register("echo", Echo)
    registry.unregister("echo")
    assert registry.kinds() == []


def test_isolated_registry_sees_no_entry_points(registry):
    assert registry.kinds() == []
    assert "equality" in Registry().kinds()


def test_functions_taking_a_registry_declare_its_type():
    import typing

    from gradekit.registry.entries import build_entry
    from gradekit.run.composite import _children
    from gradekit.suite.load import load_suite
    from gradekit.suite.schema import suite_schema

    for function in (build_entry, suite_schema, load_suite, _children):
        hint = typing.get_type_hints(function)["registry"]
        assert Registry in (hint, *typing.get_args(hint)), function.__qualname__


def test_code_may_register_undotted_kinds_but_never_replaces_a_builtin_silently():
    registry = Registry()
    registry.register("echo", Echo)  # the user's own process may use any valid name
    assert registry.create("echo").grade(Sample(output="hi")).message == "hi"
    registry.register("numeric", Echo)
    with pytest.raises(DuplicateKindError) as caught:
        registry.create("numeric")
    assert "distribution 'gradekit' (gradekit.graders.numeric:Numeric)" in str(caught.value)
    assert "<registered> (test_registry:Echo)" in str(caught.value)
    # The conflict is on the row of the registered factory, not on gradekit's.
    errors = {(info.kind, info.distribution): info.error for info in registry.describe(load=True)}
    assert errors[("numeric", "gradekit")] is None
    assert "provided by both" in errors[("numeric", "<registered>")]
    registry.unregister("numeric")
    assert type(registry.create("numeric")).__name__ == "Numeric"


@pytest.mark.parametrize("kind", [None, 123, ["equality"]])
def test_a_kind_that_is_not_a_string_is_a_config_error_naming_it(kind: object) -> None:
    with pytest.raises(ConfigError) as caught:
        gradekit.create(kind)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"kind must be a string naming a grader kind (such as 'equality'), got {kind!r}"
    )
