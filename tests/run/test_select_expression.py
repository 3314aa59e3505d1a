"""run_suite(select=Selection.expression(...)): tags, grader kinds and names, as `--select`."""

from __future__ import annotations

import textwrap

import pytest

import gradekit
from gradekit import ConfigError, Selection, SelectionError

SUITE = """
    graders: [{kind: equality}]
    tags: [all]
    cases:
      - {name: a, output: x, expected: x, tags: [smoke]}
      - {name: b, output: x, expected: x, tags: [smoke, slow]}
      - {name: c, output: x, expected: y, graders: [{kind: contains, name: has-x, values: [x]}]}
"""


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(SUITE), encoding="utf-8")
    return gradekit.load_suite(path)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("tag:smoke", ["a", "b"]),
        ("tag:smoke and not tag:slow", ["a"]),
        ("tag:all and not tag:smoke", ["c"]),
        ("grader:contains", ["c"]),
        ("grader:has-x or b", ["b", "c"]),
        ("grader:equality and (a or c)", ["a", "c"]),
    ],
)
def test_an_expression_selects_by_tag_grader_and_name(suite, expression, expected):
    report = gradekit.run_suite(suite, select=Selection.expression(expression))
    assert [case.name for case in report.cases] == expected
    assert report.summary.cases == len(expected)


def test_tags_reach_the_case_reports(suite):
    report = gradekit.run_suite(suite, select=Selection.expression("a or c"))
    assert [case.tags for case in report.cases] == [("all", "smoke"), ("all",)]
    assert report.cases[0].to_dict()["tags"] == ["all", "smoke"]


def test_an_expression_combines_with_globs_and_matching_nothing_raises(suite):
    both = Selection.expression("tag:smoke") & Selection.names("b*")
    assert [case.name for case in gradekit.run_suite(suite, select=both).cases] == ["b"]
    with pytest.raises(SelectionError, match="the selection 'tag:nope'"):
        gradekit.run_suite(suite, select=Selection.expression("tag:nope"))
    with pytest.raises(ConfigError, match="needs a value"):
        Selection.expression("tag:")
