"""Only a finite, positive number of seconds is a timeout, wherever one is given.

`timeout: .nan` once loaded and switched the timeout off (a `program: sleep 3600` ran until it
was killed by hand); `.inf`, 0 and negatives are refused the same way at every level.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import gradekit
from gradekit import ConfigError, Sample
from gradekit.registry.entries import GraderEntry

BAD = [".nan", ".inf", "-.inf", "0", "-1", "1e999", "86401", "'nan'", "'1e999'", "true", "[1]"]
BAD_NUMBERS = [math.nan, math.inf, -math.inf, 0, 0.0, -1, 86_401, 10**400]


def load(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        gradekit.load_suite(path)
    return [problem.message for problem in caught.value.problems]


@pytest.mark.parametrize("value", BAD)
def test_suite_level_timeout(tmp_path, value):
    (message,) = load(tmp_path, f"timeout: {value}\ngraders: [{{kind: equality}}]\ncases: [{{}}]\n")
    assert message.startswith("expected a finite number of seconds > 0 and at most 86400, got ")


@pytest.mark.parametrize("value", ["1e2", "'10'"])
def test_a_timeout_written_as_numeric_text_is_that_number(tmp_path, value):
    # YAML 1.1 reads `1e2` (no dot) as text; a kind's numeric options read it as a number.
    path = tmp_path / "suite.yaml"
    path.write_text(
        f"timeout: {value}\ncases: [{{graders: [{{kind: equality, timeout: {value}}}]}}]\n",
        encoding="utf-8",
    )
    suite = gradekit.load_suite(path)
    (case,) = suite.cases()
    assert suite.timeout == float(yaml.safe_load(value))
    assert case.turns[0].graders[0].timeout == suite.timeout


@pytest.mark.parametrize("value", BAD)
def test_entry_level_timeout(tmp_path, value):
    (message,) = load(tmp_path, f"cases: [{{graders: [{{kind: equality, timeout: {value}}}]}}]\n")
    assert message.startswith("expected a finite number of seconds > 0 and at most 86400, got ")


@pytest.mark.parametrize("value", BAD)
def test_entry_level_timeout_of_a_kind_with_its_own(tmp_path, value):
    text = (
        f"cases: [{{graders: [{{kind: program, command: [sleep, '3600'], timeout: {value}}}]}}]\n"
    )
    (message,) = load(tmp_path, text)
    assert message.startswith("expected a finite number of seconds > 0 and at most 86400, got ")


@pytest.mark.parametrize("kind", ["program", "build", "lint"])
@pytest.mark.parametrize("value", [math.nan, math.inf, 0, -5])
def test_the_kinds_own_timeout_option(kind, value):
    config = {
        "program": {"command": ["true"]},
        "build": {"command": ["true"]},
        "lint": {"linters": ["ruff"]},
    }[kind]
    with pytest.raises(ConfigError) as caught:
        gradekit.create(kind, config={**config, "timeout": value})
    assert "finite number of seconds > 0" in str(caught.value)


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_run_suite_and_grade(tmp_path, value):
    path = tmp_path / "suite.yaml"
    path.write_text("graders: [{kind: equality}]\ncases: [{output: a, expected: a}]\n")
    suite = gradekit.load_suite(path)
    with pytest.raises(ConfigError, match="finite number of seconds > 0"):
        gradekit.run_suite(suite, defaults=gradekit.GraderDefaults(timeout=value))
    with pytest.raises(ConfigError, match="finite number of seconds > 0"):
        gradekit.grade(Sample(output="a"), [gradekit.create("equality")], timeout=value)


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_a_grader_entry_built_in_python(value):
    with pytest.raises(ConfigError, match="finite number of seconds > 0"):
        GraderEntry(gradekit.create("equality"), "equality", "equality", timeout=value)


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1", "1e999", "86401"])
def test_the_command_line(tmp_path, value):
    (tmp_path / "suite.yaml").write_text("graders: [{kind: equality}]\ncases: [{output: a}]\n")
    done = subprocess.run(
        [sys.executable, "-m", "gradekit", "run", "suite.yaml", "--timeout", value],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "finite number of seconds > 0 and at most 86400" in done.stderr


def test_a_valid_timeout_still_loads(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(
        "timeout: 86400\ngraders: [{kind: program, command: [cat], timeout: 0.5}]\ncases: [{}]\n"
    )
    suite = gradekit.load_suite(path)
    assert suite.timeout == 86400.0
    assert suite.graders[0].grader.timeout == 0.5
