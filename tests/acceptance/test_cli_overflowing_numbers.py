"""A number too large for a float is an error where it is written, never a silent infinity.

Python reads `1e999` (JSON) or `1.0e+999` (YAML) as infinity without a word: a tolerance, a
budget or an expected value then compares with everything or nothing. An explicit infinity
(YAML's `.inf`) is what it says, and each option decides whether it takes one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import Run

DATA = (
    '{"name": "fine", "output": "1", "expected": "1"}\n'
    '{"name": "big", "output": "1", "expected": 1e999}\n'
    '{"name": "deep", "turns": [{"output": "1", "expected": "1"},'
    ' {"output": "2", "metadata": {"x": [1, -1E400]}}]}\n'
    # 301 digits and a small exponent: 1e310, with no long exponent nor 309 digits in a row.
    '{"name": "long", "output": "1", "expected": 1' + "0" * 300 + "e10}\n"
)


def test_an_overflowing_number_in_a_dataset_line_is_an_error_naming_line_and_key(
    gradekit: Run, tmp_path: Path
) -> None:
    (tmp_path / "suite.yaml").write_text("graders: [{kind: equality}]\ndataset: data.jsonl\n")
    (tmp_path / "data.jsonl").write_text(DATA)

    checked = gradekit("validate", "suite.yaml")

    assert checked.returncode == 2, checked.stderr
    lines = checked.stderr.splitlines()
    assert (
        "data.jsonl:2: $.expected: the number 1e999 is too large for a float (it would be "
        "infinity); write a smaller number, or a string to keep it as text"
    ) in lines
    assert any(
        line.startswith("data.jsonl:3: $.turns[1].metadata.x[1]: the number -1E400 is too large")
        for line in lines
    ), lines
    assert any(line.startswith("data.jsonl:4: $.expected: the number 1000") for line in lines)

    done = gradekit("run", "suite.yaml", "-o", "r.json")

    assert done.returncode == 1, done.stderr
    cases = {case["name"]: case for case in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert cases["fine"]["passed"] is True
    assert "$.expected: the number 1e999 is too large" in cases["data.jsonl:2"]["error"]
    assert "$.turns[1].metadata.x[1]: the number -1E400" in cases["data.jsonl:3"]["error"]
    assert "$.expected: the number 1000" in cases["data.jsonl:4"]["error"]


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        # YAML 1.1 reads `1e999` (no dot) as text; options read numeric text as its number.
        (
            "{kind: numeric, absolute_tolerance: 1e999}",
            "suite.yaml:1:47: graders[0].absolute_tolerance",
            "expected a number, got '1e999', too large for a float (it would be infinity)",
        ),
        (
            "{kind: equality, weight: 1e999}",
            "suite.yaml:1:36: graders[0].weight",
            "expected a number, got '1e999', too large for a float (it would be infinity)",
        ),
        (
            "{kind: numeric, relative_tolerance: 1.0e+999}",
            "suite.yaml:1:47: graders[0].relative_tolerance",
            "the number 1.0e+999 is too large for a float (it would be infinity); write .inf "
            "if infinity is meant, or quote it to keep it as text",
        ),
    ],
)
def test_an_overflowing_number_in_the_suite_is_an_error_at_its_key(
    gradekit: Run, tmp_path: Path, entry: str, where: str, message: str
) -> None:
    (tmp_path / "suite.yaml").write_text(
        f"graders: [{entry}]\ncases: [{{output: '1', expected: 1}}]\n"
    )

    done = gradekit("validate", "suite.yaml")

    assert done.returncode == 2, done.stderr
    assert f"{where}: {message}" in done.stderr.splitlines(), done.stderr


def test_an_overflowing_expected_value_in_the_suite_is_an_error_at_its_key(
    gradekit: Run, tmp_path: Path
) -> None:
    (tmp_path / "suite.yaml").write_text(
        "graders: [{kind: numeric}]\ncases:\n  - {output: '1', expected: -1.5e+400}\n"
    )

    done = gradekit("validate", "suite.yaml")

    assert done.returncode == 2, done.stderr
    assert (
        "suite.yaml:3:29: cases[0].expected: the number -1.5e+400 is too large for a float "
        "(it would be infinity); write .inf if infinity is meant, or quote it to keep it as text"
    ) in done.stderr.splitlines(), done.stderr


def test_an_explicit_infinity_in_yaml_is_kept(gradekit: Run, tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        "graders: [{kind: equality}]\n"
        "cases: [{name: inf, output: 'x', expected: 'x', metadata: {limit: -.inf}}]\n"
    )

    done = gradekit("run", "suite.yaml", "-o", "r.json")

    assert done.returncode == 0, done.stderr
