"""Many attempts per case: a suite file's `attempts:` and a dataset's `attempt` index load as
one case per attempt; every malformed attempt is an error naming its file, line and key."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import gradekit


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def _lines(folder: Path, *lines: dict[str, object]) -> None:
    (folder / "data.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_each_attempt_of_a_suite_case_is_a_case_with_its_index(tmp_path: Path) -> None:
    suite = _write(
        tmp_path,
        "suite.yaml",
        """
        name: attempts
        graders: [{kind: equality}]
        cases:
          - name: add
            input: "2+2"
            expected: "4"
            tags: [math]
            attempts:
              - "4"
              - "5"
              - {output: "4", metadata: {seed: 3}}
          - name: chat
            expected: ok
            attempts:
              - turns: [{input: hi, output: ok}, {input: again, output: nope}]
              - messages: [{role: user, content: hi}, {role: assistant, content: ok}]
          - name: plain
            output: ok
            expected: ok
        """,
    )
    cases = list(gradekit.load_suite(suite).cases())
    assert [(c.name, c.attempt) for c in cases] == [
        ("add", 0),
        ("add", 1),
        ("add", 2),
        ("chat", 0),
        ("chat", 1),
        ("plain", None),
    ]
    add = cases[:3]
    assert [c.turns[0].sample.output for c in add] == ["4", "5", "4"]
    assert all(c.turns[0].sample.input == "2+2" and c.tags == ("math",) for c in add)
    assert add[2].turns[0].sample.metadata["seed"] == 3
    assert [c.location.rsplit(":", 2)[1] for c in add if c.location] == ["9", "10", "11"]
    assert [t.sample.output for t in cases[3].turns] == ["ok", "nope"]
    assert cases[4].turns[0].messages is not None
    # The case's graders are created once and shared by its attempts.
    assert add[0].turns[0].graders == add[1].turns[0].graders


@pytest.mark.parametrize(
    ("body", "line", "path", "message"),
    [
        ('output: "4"\nattempts: ["4"]', 5, "cases[0]", "gives 'output' in each attempt"),
        ("attempts: []", 5, "cases[0].attempts", "expected a non-empty list of attempts"),
        ("attempts: {a: 1}", 5, "cases[0].attempts", "expected a non-empty list of attempts"),
        (
            'attempts:\n  - "4"\n  - outptu: "4"',
            7,
            "cases[0].attempts[1]",
            "unknown key 'outptu' in an attempt",
        ),
        (
            'attempts:\n  - output: "4"\n    tool_calls: 3',
            7,
            "cases[0].attempts[0].tool_calls",
            "expected a list of tool calls",
        ),
        (
            "attempts:\n  - metadata: {}",
            6,
            "cases[0].attempts[0]",
            "an attempt gives 'output', 'tool_calls', 'turns' or 'messages'",
        ),
        (
            'attempt: 1\noutput: "4"',
            5,
            "cases[0]",
            "unknown key 'attempt' (did you mean 'attempts'?)",
        ),
    ],
)
def test_a_malformed_attempt_is_an_error_at_its_line_and_key(
    tmp_path: Path, body: str, line: int, path: str, message: str
) -> None:
    head = "name: bad\ngraders: [{kind: equality}]\ncases:\n  - name: a\n"
    indented = "".join(f"    {part}\n" for part in body.splitlines())
    suite = tmp_path / "suite.yaml"
    suite.write_text(head + indented + "    expected: '4'\n")
    with pytest.raises(gradekit.ConfigError) as raised:
        gradekit.load_suite(suite)
    problems = str(raised.value).splitlines()[1:]
    assert len(problems) == 1, problems
    where, _, rest = problems[0].partition(": ")
    assert where.startswith(f"{suite}:{line}:"), problems
    assert rest.startswith(f"{path}: ") and message in rest, problems


def _dataset_suite(tmp_path: Path) -> Path:
    return _write(
        tmp_path,
        "suite.yaml",
        "name: data\ngraders: [{kind: equality}]\ndataset: data.jsonl\n",
    )


def test_dataset_lines_with_an_attempt_index_are_attempts_of_their_case(tmp_path: Path) -> None:
    _lines(
        tmp_path,
        {"name": "a", "attempt": 0, "output": "x", "expected": "x"},
        {"name": "a", "attempt": 1, "output": "y", "expected": "x"},
        {"name": "b", "output": "x", "expected": "x"},
        {"name": "a", "attempt": 2, "output": "x", "expected": "x"},
    )
    cases = list(gradekit.load_suite(_dataset_suite(tmp_path)).cases())
    assert [(c.name, c.attempt, c.error) for c in cases] == [
        ("a", 0, None),
        ("a", 1, None),
        ("b", None, None),
        ("a", 2, None),
    ]
    assert "attempt" not in cases[0].metadata  # the index is not metadata for graders


@pytest.mark.parametrize(
    ("lines", "error"),
    [
        (
            [{"attempt": 0}, {"attempt": 2}],
            "data.jsonl:2: attempt: attempt 2 of case 'a' leaves a gap: attempt 1 missing "
            "(attempt 0 is at data.jsonl:1)",
        ),
        (
            [{"attempt": 1}],
            "data.jsonl:1: attempt: attempt 1 of case 'a' leaves a gap: attempt 0 missing "
            "(it is the first)",
        ),
        (
            [{"attempt": 0}, {"attempt": 1}, {"attempt": 1}],
            "data.jsonl:3: attempt: attempt 1 of case 'a' is given twice or out of order "
            "(also at data.jsonl:2)",
        ),
        (
            [{"attempt": 0}, {"attempt": 1}, {"attempt": 0}],
            "data.jsonl:3: attempt: attempt 0 of case 'a' is given twice or out of order "
            "(after attempt 1 at data.jsonl:2)",
        ),
        ([{"attempt": "0"}], "data.jsonl:1: attempt: expected a whole number from 0, got '0'"),
        ([{"attempt": -1}], "data.jsonl:1: attempt: expected a whole number from 0, got -1"),
        (
            [{"attempt": True}],
            "data.jsonl:1: attempt: expected a whole number from 0, got True (bool)",
        ),
        (
            [{"attempt": 0}, {}],
            "data.jsonl:2: case 'a' has attempts (the last at data.jsonl:1), so this line must "
            "give its 'attempt' index too",
        ),
        ([{"attempts": ["x"]}], "data.jsonl:1: attempts: not read from a dataset line"),
    ],
)
def test_a_bad_attempt_index_errs_its_line_naming_file_line_and_key(
    tmp_path: Path, lines: list[dict[str, object]], error: str
) -> None:
    _lines(tmp_path, *({"name": "a", "output": "x", "expected": "x", **line} for line in lines))
    cases = list(gradekit.load_suite(_dataset_suite(tmp_path)).cases())
    errors = [case.error for case in cases if case.error is not None]
    assert len(errors) == 1, errors
    assert errors[0].startswith(error), errors[0]
    assert len(cases) == len(lines)  # the other lines load; the run goes on


def test_the_json_schema_takes_attempts_and_refuses_a_bad_one() -> None:
    import jsonschema

    from gradekit.suite.schema import suite_schema

    validator = jsonschema.Draft202012Validator(suite_schema())
    cases: list[dict[str, object]] = [
        {"name": "a", "expected": "4", "attempts": ["4", {"output": {"x": 1}}]},
        {"name": "b", "attempts": [{"turns": [{"input": "hi", "output": "ok"}]}]},
    ]
    suite = {"name": "s", "graders": [{"kind": "equality"}], "cases": cases}
    assert list(validator.iter_errors(suite)) == []
    for bad in ([], [{"outptu": "4"}]):
        wrong = {**suite, "cases": [{"name": "c", "attempts": bad}]}
        assert list(validator.iter_errors(wrong)), bad
