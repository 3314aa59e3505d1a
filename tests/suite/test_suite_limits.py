"""Hostile or broken YAML is a clean `file:line:column` error, quickly, never a traceback or a
hang: alias bombs, recursive aliases, deep nesting, huge integers, impossible dates."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

import gradekit
from gradekit import ConfigError
from gradekit.suite.load import load_suite
from gradekit.suite.located_yaml import MAX_ALIAS_VALUES, MAX_DEPTH, LocatingLoader, load_located


def problems(path: Path, registry=None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    return [str(problem).replace(str(path), "suite.yaml") for problem in caught.value.problems]


def laughs(levels: int) -> str:
    """A case whose metadata holds a billion-laughs alias bomb of `levels` levels of ten."""
    lines = ["graders: [{kind: equality}]", "cases:", "  - name: boom", "    layers:"]
    lines.append('      l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    for level in range(1, levels):
        refs = ",".join([f"*l{level - 1}"] * 10)
        lines.append(f"      l{level}: &l{level} [{refs}]")
    lines.append(f"    output: *l{levels - 1}")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_within_a_second(write):
    path = write(laughs(9))
    started = time.perf_counter()
    (line,) = problems(path)
    assert time.perf_counter() - started < 1.0
    assert line == (
        f"suite.yaml:10:11: invalid YAML: aliases expand this document to more than "
        f"{MAX_ALIAS_VALUES:,} values beyond the ones written; write the values out, or "
        "reuse fewer of them"
    )


def test_a_small_alias_expansion_still_loads(write):
    (case,) = load_suite(write(laughs(3))).cases()
    assert len(case.turns[0].sample.output) == 10


def test_a_recursive_alias_is_refused(write):
    path = write(
        """
        graders: [{kind: equality}]
        cases:
          - name: loop
            output: &self [a, *self]
        """
    )
    assert problems(path) == [
        "suite.yaml:4:13: invalid YAML: the alias '*self' is used inside the value it names "
        "(a recursive alias); write the value out"
    ]


def nested(depth: int) -> str:
    return "graders: [{kind: equality}]\ncases:\n  - output: " + "[" * depth + "]" * depth + "\n"


@pytest.mark.parametrize("depth", [MAX_DEPTH, 150, 999, 10_000])
def test_a_value_nested_too_deep(write, depth):
    path = write(nested(depth))
    (line,) = problems(path)
    assert line.startswith("suite.yaml:3:")
    assert line.endswith(
        f"invalid YAML: values are nested more than {MAX_DEPTH} levels deep; flatten this value"
    )


def test_nesting_within_the_limit_loads(write):
    (case,) = load_suite(write(nested(MAX_DEPTH - 4))).cases()
    assert case.turns[0].sample.output is not None


@pytest.mark.parametrize("depth", [150, 2_000])
def test_the_pure_python_parser_refuses_deep_nesting_too(depth):
    text = "a: " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(ConfigError) as caught:
        load_located(text, "suite.yaml", fast=False)
    (problem,) = caught.value.problems
    assert problem.where is not None and problem.where.startswith("suite.yaml:1:")
    assert "nested more than" in problem.message


def composites(depth: int) -> str:
    entry = "{kind: equality}"
    for _ in range(depth):
        entry = f"{{kind: all, graders: [{entry}]}}"
    return f"cases:\n  - graders: [{entry}]\n"


def test_composites_nested_1000_deep(write):
    (line,) = problems(write(composites(1000)))
    assert "nested more than" in line and line.startswith("suite.yaml:2:")


def test_composites_nested_past_their_own_limit(write):
    from gradekit.registry.entries import MAX_COMPOSITE_DEPTH

    # Shallow enough for the YAML limit, too deep for composites.
    (line,) = problems(write(composites(MAX_COMPOSITE_DEPTH + 1)))
    assert line.endswith(
        f"composite graders are nested more than {MAX_COMPOSITE_DEPTH} deep; flatten them"
    ), line


def test_composites_nested_deep_in_python_are_a_config_error():
    config: dict = {"kind": "equality"}
    for _ in range(1000):
        config = {"kind": "all", "graders": [config]}
    with pytest.raises(ConfigError, match="nested more than"):
        gradekit.create("all", config={"graders": config["graders"]})


def test_a_5000_digit_integer(write):
    path = write("graders: [{kind: equality}]\ncases:\n  - expected: " + "9" * 5000 + "\n")
    assert problems(path) == [
        "suite.yaml:3:15: invalid YAML: an integer of 5000 digits (at most 4300); quote it to "
        "keep it as text"
    ]


@pytest.mark.parametrize("value", ["2023-02-30", "2023-13-01", "2023-01-01 25:00:00"])
def test_an_impossible_date(write, value):
    path = write(f"graders: [{{kind: equality}}]\ncases:\n  - expected: {value}\n")
    (line,) = problems(path)
    assert line.startswith(f"suite.yaml:3:15: invalid YAML: '{value}' is not a valid date")
    assert line.endswith("quote it to keep it as text")


def test_the_c_parser_is_used_where_libyaml_is_installed():
    if not yaml.__with_libyaml__:
        pytest.skip("this pyyaml was built without libyaml")
    assert issubclass(LocatingLoader, yaml.cyaml.CParser)
