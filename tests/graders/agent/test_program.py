"""The `program` kind: real commands, checked for exit code and output."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hostile_graders import MODES, lingering, marker, sleepers_code

import gradekit
from gradekit import ConfigError, Sample
from gradekit.process.commands import _network_prefix
from gradekit.registry.entries import KIND_TIMEOUT_GRACE, build_entry

Workspace = Callable[[Mapping[str, str]], Path]
Alive = Callable[[int], bool]
PY = sys.executable


def program(**config: Any) -> Any:
    return gradekit.create("program", config=config)


def checks(result: gradekit.GradeResult) -> dict[str, tuple[bool, str]]:
    assert result.details is not None
    return {c["name"]: (c["passed"], c["message"]) for c in result.details["checks"]}


def test_stdin_is_the_sample_output_by_default() -> None:
    grader = program(
        command=[PY, "-c", "import sys; print(sys.stdin.read().upper())"], expected_output="HELLO"
    )
    result = grader.grade(Sample(output="hello"))
    assert result.outcome == "pass"
    assert checks(result) == {
        "exit code": (True, "exited with 0 (expected 0)"),
        "output": (True, "stdout contains 'HELLO'"),
    }
    assert result.details is not None
    assert result.details["stdout"] == "HELLO\n"
    assert result.details["exit_code"] == 0


def test_structured_output_is_fed_as_json() -> None:
    grader = program(
        command=[PY, "-c", "import json, sys; print(json.load(sys.stdin)['answer'])"],
        expected_output="42",
        match="exact",
    )
    assert grader.grade(Sample(output={"answer": 42})).outcome == "pass"


def test_command_string_is_split_like_a_shell_without_one() -> None:
    grader = program(command=f"{PY} -c 'import sys; print(sys.argv[1:])' 'a b' $HOME")
    result = grader.grade(Sample())
    assert result.details is not None
    assert result.details["stdout"] == "['a b', '$HOME']\n"


def test_test_command_is_an_alias_and_exit_code_is_checked(workspace: Workspace) -> None:
    root = workspace(
        {
            "solution.py": "def add(a, b):\n    return a - b\n",
            "check.py": "from solution import add\nassert add(2, 2) == 4, 'add is wrong'\n",
        }
    )
    grader = program(test_command=[PY, "check.py"])
    result = grader.grade(Sample(workspace=str(root)))
    assert result.outcome == "fail"
    assert checks(result)["exit code"] == (False, "exited with 1 (expected 0)")
    assert result.details is not None
    assert "AssertionError: add is wrong" in result.details["stderr"]
    assert (
        program(command=[PY, "check.py"], expected_exit_code=1)
        .grade(Sample(workspace=str(root)))
        .outcome
        == "pass"
    )


@pytest.mark.parametrize(
    ("match", "stream", "expected", "outcome"),
    [
        ("contains", "stdout", "total: 3", "pass"),
        ("contains", "stdout", "warning", "fail"),
        ("contains", "stderr", "warning", "pass"),
        ("contains", "both", "warning", "pass"),
        ("exact", "stdout", "total: 3", "pass"),
        ("exact", "stdout", "total:", "fail"),
        ("regex", "stdout", r"^total: \d+$", "pass"),
        ("regex", "stdout", r"^total: [a-z]+$", "fail"),
    ],
)
def test_output_matching(match: str, stream: str, expected: str, outcome: str) -> None:
    code = "import sys; print('total: 3'); print('warning: slow', file=sys.stderr)"
    grader = program(command=[PY, "-c", code], expected_output=expected, match=match, stream=stream)
    assert grader.grade(Sample()).outcome == outcome


@pytest.mark.parametrize("mode", MODES)
def test_timeout_is_a_fail_with_exit_code_minus_one_and_no_orphan(mode: str) -> None:
    duration = marker()
    grader = program(
        command=[PY, "-c", sleepers_code(duration, 1, detach=False, hang=True)],
        timeout=1,
        sandbox=mode,
    )
    started = time.monotonic()
    result = grader.grade(Sample())
    assert time.monotonic() - started < 3.0
    assert result.outcome == "fail"
    assert result.message == "timed out after 1s"
    assert result.details is not None
    assert result.details["exit_code"] == -1
    assert lingering(duration) == []


def test_default_timeout_is_thirty_seconds() -> None:
    assert program(command=["true"]).timeout == 30.0


def test_command_not_found_is_an_error_not_a_fail() -> None:
    result = program(command=["gradekit-no-such-tool", "--x"]).grade(Sample())
    assert result.outcome == "error"
    assert result.error == (
        "CommandError: command 'gradekit-no-such-tool' not found on PATH; "
        "install it or give its full path"
    )


def test_command_that_cannot_start_is_an_error(workspace: Workspace) -> None:
    root = workspace({"run.sh": "echo hi\n"})  # not executable
    result = program(command=["./run.sh"]).grade(Sample(workspace=str(root)))
    assert result.outcome == "error"
    assert result.error == (
        "CommandError: command './run.sh' not found or not executable in the workspace; "
        "check the command's path"
    )


def test_secret_env_var_is_not_seen_and_declared_env_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("MY_FLAG", "on")
    code = "import os; print(os.environ.get('ANTHROPIC_API_KEY'), os.environ.get('MY_FLAG'))"
    plain = program(command=[PY, "-c", code], expected_output="None None")
    assert plain.grade(Sample()).outcome == "pass"
    declared = program(command=[PY, "-c", code], env=["MY_FLAG"], expected_output="None on")
    assert declared.grade(Sample()).outcome == "pass"
    valued = program(command=[PY, "-c", code], env={"MY_FLAG": 7}, expected_output="None 7")
    assert valued.grade(Sample()).outcome == "pass"


def test_grading_never_modifies_the_workspace(workspace: Workspace) -> None:
    root = workspace({"out.txt": "agent wrote this"})
    code = "open('out.txt', 'w').write('grader'); open('extra', 'w')"
    assert program(command=[PY, "-c", code]).grade(Sample(workspace=str(root))).passed
    assert sorted(p.name for p in root.iterdir()) == ["out.txt"]
    assert (root / "out.txt").read_text() == "agent wrote this"
    in_place = program(command=[PY, "-c", code], copy_workspace=False)
    assert in_place.grade(Sample(workspace=str(root))).passed
    assert (root / "out.txt").read_text() == "grader"


def test_max_output_cuts_the_capture() -> None:
    grader = program(command=[PY, "-c", "print('y' * 5000)"], max_output="1KiB")
    result = grader.grade(Sample())
    assert result.details is not None
    assert result.details["stdout"].endswith(
        "\n[gradekit: output cut at 1024 bytes; 3977 more bytes dropped]"
    )


@pytest.mark.parametrize("mode", MODES)
def test_network_false(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    code = "print(open('/proc/net/dev').read().count(':'))"
    grader = program(command=[PY, "-c", code], network=False, expected_output="1", sandbox=mode)
    assert grader.grade(Sample()).outcome == "pass"
    if mode == "bwrap":
        return  # bubblewrap makes the namespace itself: `unshare` is not needed
    # Where `unshare` is missing the machine cannot isolate: an error result, never a pass.
    _network_prefix.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    try:
        result = program(command=[PY, "-c", code], network=False, sandbox="none").grade(Sample())
    finally:
        _network_prefix.cache_clear()
    assert result.outcome == "error"
    assert result.error == (
        "SandboxError: network: false needs the `unshare` command (util-linux), which is not "
        "installed; install util-linux or set network: true"
    )


def test_agrade_runs_many_in_parallel() -> None:
    grader = program(command=[PY, "-c", "import time; time.sleep(1)"])

    async def main() -> list[gradekit.GradeResult]:
        return await asyncio.gather(*(grader.agrade(Sample()) for _ in range(6)))

    started = time.monotonic()
    results = asyncio.run(main())
    assert [r.outcome for r in results] == ["pass"] * 6
    assert time.monotonic() - started < 3.5


def test_common_timeout_key_is_the_programs_own() -> None:
    entry = build_entry({"kind": "program", "command": "true", "timeout": 2})
    assert entry is not None
    assert entry.grader.timeout == 2.0  # type: ignore[attr-defined]
    assert entry.timeout == 2.0 + KIND_TIMEOUT_GRACE
    default = build_entry({"kind": "program", "command": "true"})
    assert default is not None
    assert default.timeout == 30.0 + KIND_TIMEOUT_GRACE


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({}, "$.command: this option is required: the command to run"),
        ({"command": []}, "$.command: the command is empty; give the program to run"),
        (
            {"command": "a", "test_command": "b"},
            "$.test_command: give either command or test_command, not both",
        ),
        ({"command": "'unclosed"}, '$.command: cannot split "\'unclosed": No closing quotation'),
        (
            {"command": "x", "match": "regex", "expected_output": "(("},
            "$.expected_output: invalid regular expression: missing ) at position 2",
        ),
        (
            {"command": "x", "match": "glob"},
            "$.match: expected one of 'contains', 'exact', 'regex', got 'glob'",
        ),
        (
            {"command": "x", "timeout": -1},
            "$.timeout: expected a finite number of seconds > 0 and at most 86400, got -1.0",
        ),
        (
            {"command": "x", "memory_limit": "lots"},
            "$.memory_limit: expected a size such as 1048576, '512MiB' or '2GiB' or null "
            "(no limit), got 'lots'",
        ),
        (
            {"command": "x", "env": "SECRET"},
            "$.env: expected a list of variable names or a map of NAME: value, got 'SECRET'",
        ),
        ({"command": "x", "network": "no"}, "$.network: expected true or false, got 'no'"),
        (  # it passed a variable named `FOO=bar` through: none such, so FOO was never set
            {"command": "x", "env": ["PATH", "FOO=bar"]},
            "$.env: 'FOO=bar' is not a variable name; to set FOO, write env: {FOO: bar}",
        ),
        ({"command": "x", "env": [""]}, "$.env: '' is not a variable name"),
        ({"command": "x", "env": {"A=B": "c"}}, "$.env: 'A=B' is not a variable name"),
    ],
)
def test_bad_options_name_the_key(config: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        program(**config)
    assert [str(p) for p in caught.value.problems] == [problem]


def test_defaults() -> None:
    grader = program(command="true")
    assert (grader.memory_limit, grader.max_output, grader.cpu_limit) == (2 << 30, 1 << 20, None)
    assert (grader.copy_workspace, grader.network, grader.expected_exit_code) == (True, True, 0)
    assert (grader.match, grader.stream, grader.stdin) == ("contains", "stdout", None)
    assert program(command="true", memory_limit=None).memory_limit is None
    assert program(command="true", memory_limit="512MiB").memory_limit == 512 << 20
