"""Keys that other frameworks use for gradekit's fields: kept as metadata, with a warning once
per suite; errors with `strict`."""

from __future__ import annotations

import json

import pytest

from gradekit import ConfigError
from gradekit.suite.load import load_suite


@pytest.mark.parametrize(
    ("key", "field"),
    [
        ("ground_truth", "expected"),
        ("expected_output", "expected"),
        ("answer", "expected"),
        ("response", "output"),
        ("evaluations", "graders"),
        ("metrics", "graders"),
        ("assert", "graders"),
    ],
)
def test_each_peer_key_is_metadata_with_a_warning(write, registry, key, field):
    path = write(f"graders: [{{kind: exact}}]\ncases:\n  - name: x\n    {key}: v\n")
    suite = load_suite(path, registry=registry)
    (case,) = suite.cases()
    assert case.turns[0].sample.metadata == {key: "v"}
    assert list(suite.warnings) == [
        f"{path}:4:5: case 'x': '{key}' is kept as metadata; did you mean '{field}'?"
    ]


def test_one_warning_per_key_per_suite_naming_the_first_place(write, registry):
    path = write(
        """
        graders: [{kind: exact}]
        cases:
          - {name: a, ground_truth: "1"}
          - {name: b, ground_truth: "2"}
          - name: c
            turns:
              - {input: x, ground_truth: "3", response: "3"}
        """
    )
    assert list(load_suite(path, registry=registry).warnings) == [
        f"{path}:3:15: case 'a': 'ground_truth' is kept as metadata; did you mean 'expected'? "
        "(also in 2 more places)",
        f"{path}:7:39: case 'c', turn 0: 'response' is kept as metadata; did you mean 'output'?",
    ]


def test_under_metadata_a_peer_key_is_no_warning(write, registry):
    path = write("graders: [{kind: exact}]\ncases: [{metadata: {answer: 4}}]\n")
    suite = load_suite(path, registry=registry)
    assert list(suite.warnings) == []
    assert next(iter(suite.cases())).turns[0].sample.metadata == {"answer": 4}


def test_strict_makes_each_one_an_error(write, registry):
    path = write(
        """
        graders: [{kind: exact}]
        cases:
          - {name: a, ground_truth: "1"}
          - {name: b, response: "2"}
        """
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry, strict=True)
    assert [str(p).replace(str(path), "suite.yaml") for p in caught.value.problems] == [
        "suite.yaml:3:15: cases[0]: 'ground_truth' is not a gradekit field; did you mean "
        "'expected'? (strict: rename it, or put it under 'metadata:' to keep it as metadata)",
        "suite.yaml:4:15: cases[1]: 'response' is not a gradekit field; did you mean "
        "'output'? (strict: rename it, or put it under 'metadata:' to keep it as metadata)",
    ]


def test_dataset_lines_warn_once_as_they_are_read(write, registry, tmp_path):
    lines = [{"name": f"d{i}", "output": "1", "answer": "1"} for i in range(3)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    suite = load_suite(write("graders: [{kind: exact}]\ndataset: d.jsonl\n"), registry=registry)
    assert list(suite.warnings) == []  # the lines are not read at load
    assert all(case.error is None for case in suite.cases())
    assert list(suite.warnings) == [
        "d.jsonl:1: case 'd0': 'answer' is kept as metadata; did you mean 'expected'?"
    ]


def test_strict_dataset_line_is_an_errored_case(write, registry, tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"name": "d", "answer": "1"}) + "\n")
    path = write("graders: [{kind: exact}]\ndataset: d.jsonl\n")
    (case,) = load_suite(path, registry=registry, strict=True).cases()
    assert case.error == (
        "d.jsonl:1: 'answer' is not a gradekit field; did you mean 'expected'? (strict: rename "
        "it, or put it under 'metadata:' to keep it as metadata)"
    )


@pytest.mark.parametrize("key", ["evaluations", "metrics", "assert"])
def test_a_peer_graders_key_at_the_top_level_suggests_graders(write, registry, key):
    path = write(f"{key}: [{{kind: exact}}]\ncases: [{{graders: [{{kind: exact}}]}}]\n")
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    (problem,) = caught.value.problems
    assert problem.message.startswith(f"unknown top-level key '{key}' (did you mean 'graders'?)")


def test_type_in_a_grader_entry_suggests_kind(write, registry):
    path = write(
        """
        cases:
          - graders: [{type: exact}]
          - graders: [{kind: exact, type: exact}]
        """
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    assert [str(p).replace(str(path), "suite.yaml") for p in caught.value.problems] == [
        "suite.yaml:2:15: cases[0].graders[0]: missing 'kind': every grader entry names its "
        "kind ('type' is another framework's name for it: did you mean 'kind'?)",
        "suite.yaml:3:29: cases[1].graders[0]: unknown option 'type' for kind 'exact': gradekit "
        "names a grader's kind with 'kind' (did you mean 'kind'?); remove 'type'",
    ]
