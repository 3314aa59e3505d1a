"""`dataset:` JSONL files: streamed after the YAML cases, a bad line is an errored case."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from gradekit import ConfigError, ToolCall
from gradekit.suite.load import load_suite


def jsonl(path: Path, *lines: object) -> Path:
    """Write lines (objects as JSON, strings as they are) to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def test_dataset_cases_follow_the_yaml_cases(write, registry, tmp_path):
    (tmp_path / "ws").mkdir()
    jsonl(
        tmp_path / "runs" / "out.jsonl",
        {"name": "d1", "input": "2+2", "output": "4", "expected": "4", "tags": ["x"]},
        {"input": "q", "workspace": "ws"},
        "",
        {
            "name": "d3",
            "graders": [{"kind": "exact", "name": "line"}],
            "turns": [{"input": "a"}, {"input": "b", "tool_calls": [{"name": "f"}]}],
        },
    )
    path = write(
        """
        graders: [{kind: exact}]
        cases: [{name: first}]
        dataset: runs/out.jsonl
        """
    )
    suite = load_suite(path, registry=registry)
    assert suite.case_count == 4
    cases = list(suite.cases())
    assert [case.name for case in cases] == ["first", "d1", "runs/out.jsonl:2", "d3"]
    assert all(case.error is None for case in cases)
    d1, d2, d3 = cases[1:]
    assert d1.turns[0].sample.output == "4"
    assert d1.turns[0].sample.metadata == {}
    assert d1.tags == ("x",)
    assert d1.location == "runs/out.jsonl:1"
    assert d2.turns[0].sample.workspace == str(tmp_path / "ws")
    assert [e.name for e in d3.turns[1].graders] == ["exact", "line"]
    assert d3.turns[1].sample.tool_calls == (ToolCall("f"),)
    assert d3.turns[1].sample.history == (d3.turns[0].sample,)


def test_a_malformed_line_is_an_errored_case_and_the_rest_go_on(write, registry, tmp_path):
    jsonl(
        tmp_path / "data.jsonl",
        {"name": "ok1"},
        '{"name": "bad json" "input": 1}',
        ["not", "a", "case"],
        {"name": "typo", "graders": [{"kind": "exact", "ignore_cse": True}]},
        {"name": "kind", "turns": [{"input": "a", "graders": [{"kind": "nope"}]}]},
        {"name": "fine", "input": "x"},
        {"name": "shape", "expectd": 1, "tool_calls": [{"name": 3}]},
        '{"name": "cut',
        {"name": "ok2"},
    )
    path = write("graders: [{kind: exact}]\ncases: [{name: first}]\ndataset: data.jsonl\n")
    suite = load_suite(path, registry=registry)
    cases = list(suite.cases())
    assert [(case.name, case.error) for case in cases] == [
        ("first", None),
        ("ok1", None),
        (
            "data.jsonl:2",
            "data.jsonl:2: invalid JSON: Expecting ',' delimiter (column 21); fix this line",
        ),
        (
            "data.jsonl:3",
            "data.jsonl:3: a dataset line must be a JSON object (one case), got "
            "['not', 'a', 'case'] (list)",
        ),
        (
            "typo",
            "data.jsonl:4: graders[0]: unknown option 'ignore_cse' for kind 'exact' "
            "(did you mean 'ignore_case'?)",
        ),
        (
            "kind",
            "data.jsonl:5: turns[0].graders[0].kind: unknown grader kind 'nope'; install the "
            "package that provides it, or register it with gradekit.register(); "
            "`gradekit kinds` lists the known kinds",
        ),
        ("fine", None),
        (
            "shape",
            "data.jsonl:7: unknown key 'expectd' (did you mean 'expected'?); to keep it as "
            "metadata, put it under 'metadata:'; tool_calls[0].name: expected a string, got 3 "
            "(int)",
        ),
        (
            "data.jsonl:8",
            "data.jsonl:8: invalid JSON: Invalid control character at column 14; fix this line",
        ),
        ("ok2", None),
    ]
    assert all(case.turns == () for case in cases if case.error)
    assert cases[2].location == "data.jsonl:2"


def test_a_line_repeating_a_case_name_is_an_error_at_load_naming_both(write, registry, tmp_path):
    jsonl(
        tmp_path / "data.jsonl",
        {"name": "a"},
        {"name": "first", "input": "clash"},
        {"name": "b", "attempt": 0},
        {"name": "b", "attempt": 1},
        {"input": "unnamed"},
        {"input": "a", "name": "a"},
        {"name": "c"},
        {"name": "c", "attempt": 0},
    )
    path = write("graders: [{kind: exact}]\ncases: [{name: first}]\ndataset: data.jsonl\n")
    with pytest.raises(ConfigError) as raised:
        load_suite(path, registry=registry)
    hint = (
        "give each case its own name (the lines of one case's attempts each give their 'attempt')"
    )
    assert str(raised.value).splitlines()[1:] == [
        f"data.jsonl:2:1: duplicate case name 'first' (also at {path}:2:9); {hint}",
        f"data.jsonl:6:1: duplicate case name 'a' (also at data.jsonl:1); {hint}",
        f"data.jsonl:8:1: duplicate case name 'c' (also at data.jsonl:7); {hint}",
    ]


def test_invalid_utf8_line(write, registry, tmp_path):
    (tmp_path / "d.jsonl").write_bytes(b'{"name": "a"}\n{"name": "caf\xe9"}\n{"name": "b"}\n')
    suite = load_suite(write("graders: [{kind: exact}]\ndataset: d.jsonl\n"), registry=registry)
    assert [(c.name, c.error) for c in suite.cases()] == [
        ("a", None),
        ("d.jsonl:2", "d.jsonl:2: the line is not UTF-8 text; save the file as UTF-8"),
        ("b", None),
    ]


def test_case_count_skips_blank_lines_and_lines_without_newline(write, registry, tmp_path):
    (tmp_path / "d.jsonl").write_text("{}\n\n  \n{}\n{}", encoding="utf-8")
    suite = load_suite(write("graders: [{kind: exact}]\ndataset: d.jsonl\n"), registry=registry)
    assert suite.case_count == 3
    assert [c.name for c in suite.cases()] == ["d.jsonl:1", "d.jsonl:4", "d.jsonl:5"]


def test_the_dataset_is_read_when_iterated_not_at_load(write, registry, tmp_path):
    data = jsonl(tmp_path / "d.jsonl", {"name": "before"})
    suite = load_suite(write("graders: [{kind: exact}]\ndataset: d.jsonl\n"), registry=registry)
    jsonl(data, {"name": "after"}, {"name": "more"})
    assert [c.name for c in suite.cases()] == ["after", "more"]


def test_a_dataset_removed_after_load_is_one_errored_case(write, registry, tmp_path):
    data = jsonl(tmp_path / "d.jsonl", {"name": "a"})
    suite = load_suite(write("graders: [{kind: exact}]\ndataset: d.jsonl\n"), registry=registry)
    data.unlink()
    assert [(c.name, c.error) for c in suite.cases()] == [
        ("d.jsonl", "d.jsonl: cannot read the dataset: No such file or directory")
    ]


def test_repeated_grader_configs_are_created_once(write, registry, created, tmp_path):
    lines = [
        {"name": f"c{i}", "graders": [{"kind": "counted", "name": f"g{i % 3}"}]} for i in range(300)
    ]
    jsonl(tmp_path / "d.jsonl", *lines)
    suite = load_suite(write("dataset: d.jsonl\n"), registry=registry)
    cases = list(suite.cases())
    assert len(cases) == 300
    assert sorted(created) == ["g0", "g1", "g2"]
    assert cases[0].turns[0].graders[0] is cases[3].turns[0].graders[0]
    assert cases[0].turns[0].graders[0].location == "d.jsonl"


def test_a_bad_grader_config_repeated_on_many_lines(write, registry, tmp_path):
    lines = [{"name": f"c{i}", "graders": [{"kind": "exact", "bad": 1}]} for i in range(50)]
    jsonl(tmp_path / "d.jsonl", *lines)
    cases = list(load_suite(write("dataset: d.jsonl\n"), registry=registry).cases())
    assert {c.error.split(": ", 1)[1] for c in cases} == {
        "graders[0]: unknown option 'bad' for kind 'exact'"
    }


def test_transcripts_in_a_dataset(write, registry, tmp_path):
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{x"}}
            ],
        },
    ]
    jsonl(tmp_path / "d.jsonl", {"name": "t", "messages": messages})
    (case,) = load_suite(
        write("graders: [{kind: exact}]\ndataset: d.jsonl\n"), registry=registry
    ).cases()
    assert case.error == (
        "d.jsonl:1: messages[1].tool_calls[0].function.arguments: invalid JSON in tool call "
        "arguments: Expecting property name enclosed in double quotes (column 2); arguments "
        "must be a JSON object encoded as a string"
    )


@pytest.mark.parametrize("value", ["", "3", "[a]"])
def test_dataset_key_must_be_a_path(write, registry, value):
    path = write(f"dataset: {value or 'null'}\ncases: []\n" if value else 'dataset: ""\n')
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    (problem,) = caught.value.problems
    assert problem.message.startswith("expected a file path, got ")


def test_streaming_keeps_memory_bounded(write, registry, tmp_path):
    payload = "x" * 4000
    with (tmp_path / "big.jsonl").open("w", encoding="utf-8") as file:
        for i in range(3000):
            file.write(json.dumps({"name": f"c{i}", "input": payload, "output": "y"}) + "\n")
    size = (tmp_path / "big.jsonl").stat().st_size
    suite = load_suite(write("graders: [{kind: exact}]\ndataset: big.jsonl\n"), registry=registry)
    tracemalloc.start()
    try:
        count = sum(1 for case in suite.cases() if case.error is None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 3000
    assert size > 12_000_000
    assert peak < 1_000_000, f"iterating a {size}-byte dataset peaked at {peak} bytes"
