"""The `code` kind inside a suite file: resolved at load, errors placed at file:line:column."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import gradekit
from gradekit import ConfigError, Sample
from gradekit.graders.user_code import Code

SUITE = """\
name: code-load
cases:
  - name: growth
    turns:
      - output: "1"
        expected: 1
        graders:
          - kind: code
            grader: "nope_mod_xyz:fn"
      - output: "2"
        graders:
          - kind: code
            grader: "graders:chek"
"""


def test_load_errors_name_file_line_case_turn_and_grader(
    write_module: Callable[..., Path],
) -> None:
    folder = write_module("graders", "def check(ctx):\n    return True\n")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        gradekit.load_suite(suite)
    assert str(caught.value) == (
        f"invalid suite file {suite} (2 problems)\n"
        f"{suite}:9:21: cases[0].turns[0].graders[0].grader: case 'growth', turn 0: cannot "
        "resolve grader 'nope_mod_xyz:fn': module 'nope_mod_xyz' was not found "
        "(ModuleNotFoundError: No module named 'nope_mod_xyz'); put it beside the suite file "
        f"({folder.resolve()}) or on the Python path, or fix the name\n"
        f"{suite}:13:21: cases[0].turns[1].graders[0].grader: case 'growth', turn 1: cannot "
        "resolve grader 'graders:chek': module 'graders' has no attribute 'chek' "
        "(AttributeError: module 'graders' has no attribute 'chek'); did you mean 'check'? "
        "check the name after the ':'"
    )


def test_graders_py_beside_the_suite_is_loaded_from_another_working_dir(
    write_module: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_module("graders", "def check(ctx):\n    return ctx.agent_response == 'ok'\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """\
            name: beside
            graders:
              - kind: code
                grader: "graders:check"
                threshold: 0.9
            cases:
              - name: one
                output: ok
            """
        ),
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    loaded = gradekit.load_suite("../suite/suite.yaml")
    [case] = list(loaded.cases())
    [entry] = case.turns[0].graders
    assert (entry.kind, entry.name, entry.threshold) == ("code", "check", None)
    assert isinstance(entry.grader, Code)
    assert entry.grader.threshold == 0.9
    assert entry.grader.grade(Sample(output="ok")).passed is True
