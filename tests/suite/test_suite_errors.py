"""Every problem of a suite file is reported at once, each as `FILE:LINE:COLUMN: path: message`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gradekit import ConfigError
from gradekit.suite.load import load_suite


def problems(path: Path, registry) -> list[str]:
    """The problem lines of loading `path`, with the file's path shortened to its name."""
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    error = caught.value
    assert error.source == str(path)
    for problem in error.problems:
        assert problem.where is not None and problem.where.startswith(f"{path}:")
    return [str(problem).replace(f"{path}:", "suite.yaml:") for problem in error.problems]


def test_every_problem_at_once_in_file_order(write, registry):
    path = write(
        """
        name: smoke
        graders:
          - kind: exact
            ignore_cse: true
        cases:
          - name: growth
            expectd: "0.14"
            graders:
              - kind: near
                tolerence: 0.1
          - name: chat
            turns:
              - input: hi
                graders:
                  - {kind: exakt}
              - input: again
                tool_calls: [{name: calc, args: {}}]
        grader: []
        """
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    assert str(caught.value).replace(str(path), "suite.yaml") == "\n".join(
        [
            "invalid suite file suite.yaml (6 problems)",
            "suite.yaml:4:5: graders[0]: unknown option 'ignore_cse' for kind 'exact' "
            "(did you mean 'ignore_case'?)",
            "suite.yaml:7:5: cases[0]: unknown key 'expectd' "
            "(did you mean 'expected'?); to keep it as metadata, put it under 'metadata:'",
            "suite.yaml:10:9: cases[0].graders[0]: unknown option 'tolerence' for "
            "kind 'near' (did you mean 'tolerance'?)",
            "suite.yaml:15:20: cases[1].turns[0].graders[0].kind: unknown "
            "grader kind 'exakt'; did you mean 'exact'?",
            "suite.yaml:17:35: cases[1].turns[1].tool_calls[0]: unknown "
            "tool call key 'args'; a tool call has name, arguments, "
            "result, error, turn",
            "suite.yaml:18:1: unknown top-level key 'grader' (did you mean 'graders'?); a suite "
            "has name, description, policy, threshold, timeout, graders, cases, dataset, traces, "
            "sandbox, tags",
        ]
    )


def test_the_issue_example_shape(write, registry):
    path = write(
        """
        cases:
          - name: a
          - name: b
          - name: growth
            graders:
              - kind: near
                tolerance: 0.01
                absolute_tolerence: 0.01
        graders: [{kind: exact}]
        """
    )
    assert problems(path, registry) == [
        "suite.yaml:8:9: cases[2].graders[0]: unknown option 'absolute_tolerence' for kind 'near'"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "cases: [{graders: [{kind: near, tolerance: abc}]}]\n",
            "suite.yaml:1:44: cases[0].graders[0].tolerance: expected a number, got 'abc'",
        ),
        (
            "cases: [{graders: [{kind: near}]}]\n",
            "suite.yaml:1:20: cases[0].graders[0].tolerance: this option is required",
        ),
        (
            "cases: [{graders: [{tolerance: 1}]}]\n",
            "suite.yaml:1:20: cases[0].graders[0]: "
            "missing 'kind': every grader entry names its kind",
        ),
        (
            "graders: [{kind: exact, mode: xml}]\ncases: [{}]\n",
            "suite.yaml:1:31: graders[0].mode: expected one of 'text', 'json', got 'xml'",
        ),
        (
            "graders: [{kind: exact, weight: heavy}]\ncases: [{}]\n",
            "suite.yaml:1:33: graders[0].weight: expected a number, got 'heavy'",
        ),
        (
            "graders: [{kind: boom, x: 1}]\ncases: [{}]\n",
            "suite.yaml:1:11: graders[0]: cannot create this grader: RuntimeError: "
            "boom with {'x': 1}",
        ),
        (  # a typo in a common key of every entry is hinted too, not only the kind's own
            "graders: [{kind: exact, advisroy: true}]\ncases: [{}]\n",
            "suite.yaml:1:25: graders[0]: unknown option 'advisroy' for kind 'exact' "
            "(did you mean 'advisory'?)",
        ),
        (
            "graders: [{kind: exact, wieght: 2}]\ncases: [{}]\n",
            "suite.yaml:1:25: graders[0]: unknown option 'wieght' for kind 'exact' "
            "(did you mean 'weight'?)",
        ),
        (
            "graders: exact\ncases: [{}]\n",
            "suite.yaml:1:10: graders: expected a list of grader entries, got 'exact'",
        ),
        (
            "graders: [exact]\ncases: [{}]\n",
            "suite.yaml:1:11: graders[0]: a grader entry must be a mapping with a 'kind', "
            "got 'exact'",
        ),
    ],
)
def test_grader_entry_problems(write, registry, text, expected):
    assert problems(write(text), registry) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cases: {a: 1}\n", "suite.yaml:1:8: cases: expected a list of cases, got {'a': 1} (dict)"),
        (
            "cases: [just-text]\n",
            "suite.yaml:1:9: cases[0]: a case must be a mapping of fields, got 'just-text'",
        ),
        (
            "name: 3\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:1:7: name: expected a string, got 3 (int)",
        ),
        (
            "timeout: 0\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:1:10: timeout: expected a finite number of seconds > 0 and at most 86400, "
            "got 0",
        ),
        (
            "description: smoke\n",
            "suite.yaml:1:1: the suite has no cases (it would pass without grading anything); "
            "add 'cases' or 'dataset'",
        ),
        (
            "- a\n- b\n",
            "suite.yaml:1:1: a suite file is a mapping with 'cases' or 'dataset', "
            "got ['a', 'b'] (list)",
        ),
        (
            "",
            "suite.yaml:1:1: a suite file is a mapping with 'cases' or 'dataset', "
            "got None (NoneType)",
        ),
        (
            "policy: most\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:1:9: policy: expected all, any or weighted, got 'most'",
        ),
        (
            "policy: al\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:1:9: policy: expected all, any or weighted, got 'al' (did you mean 'all'?)",
        ),
        (
            "policy: weighted\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:1:9: policy: policy 'weighted' needs a "
            "threshold; add `threshold: 0.8` (0 to 1)",
        ),
        (
            "policy: all\nthreshold: 0.5\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:2:12: threshold: a threshold "
            "applies to policy 'weighted', not 'all'; remove it or use policy: weighted",
        ),
        (
            "threshold: 0.5\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:1:12: threshold: a threshold needs `policy: weighted` beside it; add it",
        ),
        (
            "policy: weighted\nthreshold: 2\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:2:12: threshold: must be between 0 and 1, got 2",
        ),
        (
            "policy: {mode: weighted, threshhold: 0.5}\ncases: [{graders: [{kind: exact}]}]\n",
            "suite.yaml:1:26: policy: "
            "unknown policy key 'threshhold' (did you mean 'threshold'?); a policy has 'mode' and "
            "'threshold'",
        ),
        (
            "dataset: runs/missing.jsonl\n",
            "suite.yaml:1:10: dataset: dataset file "
            "'runs/missing.jsonl' does not exist (looked for {dir}/runs/missing.jsonl); dataset "
            "paths are relative to the suite file",
        ),
    ],
)
def test_top_level_problems(write, registry, tmp_path, text, expected):
    assert problems(write(text), registry) == [expected.replace("{dir}", str(tmp_path))]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("{name: 7}", "cases[0].name: expected a non-empty string, got 7 (int)"),
        (
            "{turns: []}",
            "cases[0].turns: expected a non-empty list of turns, got [] (list)",
        ),
        (
            "{turns: [a]}",
            "cases[0].turns[0]: a turn must be a mapping of fields, got 'a'",
        ),
        (
            "{turns: [{input: a}], output: b}",
            "cases[0]: a case with 'turns' gives 'output' per turn; move it into the turns",
        ),
        (
            "{turns: [{input: a, policy: any}]}",
            "cases[0].turns[0]: 'policy' belongs to the case, not to a turn; move it to the case",
        ),
        (
            "{turns: [{input: a}], messages: [{role: user}]}",
            "cases[0].messages: a case gives 'turns' or 'messages', not both; remove one",
        ),
        (
            "{tool_calls: {name: x}}",
            "cases[0].tool_calls: expected a list of tool calls, got {'name': x} (dict)",
        ),
        (
            "{tool_calls: [{arguments: {}}]}",
            "cases[0].tool_calls[0]: missing 'name': every tool call names its tool",
        ),
        (
            "{tool_calls: [{name: x, arguments: '{}'}]}",
            "cases[0].tool_calls[0].arguments: expected a mapping, got '{}'",
        ),
        (
            "{tool_calls: [{name: x, turn: first}]}",
            "cases[0].tool_calls[0].turn: expected a whole number, got 'first'",
        ),
        ("{context: 3}", "cases[0].context: expected a list of texts, got 3 (int)"),
        (
            "{metadata: [a]}",
            "cases[0].metadata: expected a mapping, got ['a'] (list)",
        ),
        (
            "{workspace: out}",
            "cases[0].workspace: workspace folder 'out' does not "
            "exist (looked for {dir}/out); workspace paths are relative to the suite file",
        ),
        (
            "{turns: [{input: a, workspace: nope}]}",
            "cases[0].turns[0].workspace: workspace folder 'nope' does not exist "
            "(looked for {dir}/nope); workspace paths are relative to the suite file",
        ),
        (
            "{policy: weighted}",
            "cases[0].policy: policy 'weighted' needs a threshold; add `threshold: 0.8` (0 to 1)",
        ),
    ],
)
def test_case_problems(write, registry, tmp_path, case, expected):
    path = write(f"cases:\n  - {case}\n")
    (line,) = problems(path, registry)
    assert line.split(": ", 1)[1] == expected.replace("{dir}", str(tmp_path)).replace(
        "{'name': x}", "{'name': 'x'}"
    )


def test_problem_positions_point_at_the_node(write, registry):
    path = write(
        """
        cases:
          - name: a
            turns:
              - input: hi
                worksapce: out
          - name: b
            workspace: missing
        """
    )
    assert [line.split(": ", 1)[0] for line in problems(path, registry)] == [
        "suite.yaml:5:9",  # the misspelt key itself
        "suite.yaml:7:16",  # the value of the bad workspace
    ]


def test_duplicate_case_names(write, registry):
    path = write(
        """
        cases:
          - name: same
          - name: other
          - name: same
        graders: [{kind: exact}]
        """
    )
    assert problems(path, registry) == [
        "suite.yaml:4:11: cases[2].name: duplicate case name (first at "
        "suite.yaml:2:11); give each case its own name"
    ]


def test_duplicate_yaml_keys(write, registry):
    path = write(
        """
        cases:
          - name: a
            input: one
            input: two
        graders: [{kind: exact}]
        """
    )
    assert problems(path, registry) == [
        "suite.yaml:4:5: cases[0]: duplicate key 'input' (first at line 3, column 5); "
        "remove one of them"
    ]


def test_yaml_syntax_error_has_file_line_column(write, registry):
    path = write(
        """
        cases:
          - name: a
            input: [unclosed
          - name: b
        """
    )
    # libyaml's C parser (used where pyyaml has it) and the pure-Python one word it apart.
    problem = (
        "did not find expected ',' or ']'"
        if yaml.__with_libyaml__
        else "expected ',' or ']', but got ':'"
    )
    assert problems(path, registry) == [
        f"suite.yaml:4:9: invalid YAML: {problem} (while parsing a flow sequence at line 3, "
        "column 12); fix the YAML syntax"
    ]


def test_yaml_tab_indentation_error(write, registry):
    path = write("cases:\n\t- name: a\n")
    assert problems(path, registry) == [
        "suite.yaml:2:1: invalid YAML: found character '\\t' that cannot start any token; "
        "fix the YAML syntax"
    ]


def test_unsafe_yaml_tags_are_refused(write, registry):
    path = write("cases: !!python/object/apply:os.system [echo pwned]\n")
    (line,) = problems(path, registry)
    assert line.startswith("suite.yaml:1:8: invalid YAML: could not determine a constructor")


def test_missing_file_names_the_path(tmp_path, registry):
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    assert str(caught.value) == f"suite file {path} does not exist; check the path"
    assert caught.value.source == str(path)


def test_a_folder_is_not_a_suite_file(tmp_path, registry):
    with pytest.raises(ConfigError) as caught:
        load_suite(tmp_path, registry=registry)
    assert str(caught.value) == f"cannot read suite file {tmp_path}: Is a directory; check the path"


def test_not_utf8(tmp_path, registry):
    path = tmp_path / "suite.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    assert str(caught.value) == f"suite file {path} is not UTF-8 text (byte 9); save it as UTF-8"


def test_config_error_is_a_value_error(write, registry):
    with pytest.raises(ValueError):
        load_suite(write("cases: 3\n"), registry=registry)
