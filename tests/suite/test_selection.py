"""Selection expressions: parsed and evaluated as Python would evaluate the same boolean text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradekit import ConfigError
from gradekit.suite.selection import CaseFacts, parse_selection

ATOMS = {
    "tag:smoke": lambda c: "smoke" in c.tags,
    "tag:slow": lambda c: "slow" in c.tags,
    "grader:numeric": lambda c: "numeric" in c.graders,
    "growth-*": lambda c: c.name.startswith("growth-"),
    'name:"fin qa*"': lambda c: c.name.startswith("fin qa"),
}

cases = st.builds(
    CaseFacts,
    name=st.sampled_from(["growth-1", "growth-", "fin qa 2", "other", "fin"]),
    tags=st.frozensets(st.sampled_from(["smoke", "slow", "nightly"])),
    graders=st.frozensets(st.sampled_from(["numeric", "equality"])),
)

expressions = st.recursive(
    st.sampled_from(sorted(ATOMS)),
    lambda inner: st.one_of(
        inner.map(lambda e: f"not {e}"),
        st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(" ".join),
        inner.map(lambda e: f"({e})"),
    ),
    max_leaves=8,
)


def reference(text: str, case: CaseFacts) -> bool:
    """Python's own `not` / `and` / `or` over the atoms' truth values."""
    python = text
    for atom in sorted(ATOMS, key=len, reverse=True):
        python = python.replace(atom, f" {ATOMS[atom](case)} ")
    result: bool = eval(python)
    return result


@given(expressions, cases)
def test_a_selection_means_what_python_would_make_of_it(text: str, case: CaseFacts) -> None:
    assert parse_selection(text)(case) is reference(text, case)


def test_the_issue_examples() -> None:
    smoke = CaseFacts("a", frozenset({"smoke"}), frozenset({"numeric"}))
    slow = CaseFacts("b", frozenset({"smoke", "slow"}), frozenset())
    assert parse_selection("tag:smoke and not tag:slow")(smoke)
    assert not parse_selection("tag:smoke and not tag:slow")(slow)
    assert parse_selection("grader:numeric")(smoke) and not parse_selection("grader:numeric")(slow)
    assert parse_selection("[ab]")(slow) and not parse_selection("A")(smoke)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the selection is empty"),
        ("tag:smoke and", "ends too soon"),
        ("(tag:smoke", "missing ')'"),
        ("tag:smoke)", "unexpected ')' at column 10"),
        ("or tag:x", "unexpected 'or' at column 1"),
        ("tag:", "'tag:' at column 1 needs a value"),
    ],
)
def test_a_bad_expression_says_where(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_selection(text)
