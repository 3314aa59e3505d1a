"""`tags:` on cases, the suite and dataset lines: the case's tags, never metadata; bad ones are
load errors with their file and line."""

from __future__ import annotations

import json

import pytest

from gradekit import ConfigError, load_suite


def test_suite_tags_head_each_cases_own_and_dataset_lines_give_theirs(write, registry, tmp_path):
    (tmp_path / "data.jsonl").write_text(
        json.dumps({"name": "d", "input": "x", "tags": ["slow", "smoke"]}) + "\n",
        encoding="utf-8",
    )
    path = write(
        """
        graders: [{kind: exact}]
        tags: [smoke]
        cases:
          - {name: a, input: x, tags: [fast, smoke]}
          - {name: b, input: x}
        dataset: data.jsonl
        """
    )
    cases = {case.name: case for case in load_suite(path, registry=registry).cases()}
    assert cases["a"].tags == ("smoke", "fast")
    assert cases["b"].tags == ("smoke",)
    assert cases["d"].tags == ("smoke", "slow")
    assert all("tags" not in case.turns[0].sample.metadata for case in cases.values())


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("tags: smoke\ncases: [{input: x}]", ":2:7: tags", "expected a list of tags"),
        ("cases:\n  - input: x\n    tags: [ok, 3]", ":4:16: cases[0].tags[1]", "non-empty str"),
        ("cases:\n  - input: x\n    tags: {a: 1}", ":4:11: cases[0].tags", "a list of tags"),
    ],
)
def test_bad_tags_are_load_errors_at_their_line(write, registry, text, where, message):
    path = write("graders: [{kind: exact}]\n" + text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    shown = str(caught.value)
    assert f"{path}{where}: " in shown
    assert message in shown


def test_tags_in_a_turn_belong_to_the_case(write, registry):
    path = write("graders: [{kind: exact}]\ncases:\n  - turns: [{input: x, tags: [a]}]\n")
    with pytest.raises(ConfigError, match="'tags' belongs to the case, not to a turn"):
        load_suite(path, registry=registry)


def test_a_bad_dataset_line_tag_is_an_errored_case(write, registry, tmp_path):
    (tmp_path / "data.jsonl").write_text('{"name": "d", "tags": [""]}\n', encoding="utf-8")
    path = write("graders: [{kind: exact}]\ndataset: data.jsonl\n")
    (case,) = load_suite(path, registry=registry).cases()
    assert case.error is not None
    assert case.error.startswith("data.jsonl:1: tags[0]: a tag is a non-empty string")
