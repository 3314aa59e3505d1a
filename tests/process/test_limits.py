"""A command's limits are set by gradekit's launcher or `prlimit` in front of it (no Python
between fork and exec), or in the forked child where neither runs: the same limits and errors
every way."""

from __future__ import annotations

import shutil
import sys

import pytest

import gradekit
from gradekit.core.errors import CommandError
from gradekit.process import commands as process
from gradekit.process import limits
from gradekit.process.bubblewrap import problem as sandbox_problem
from gradekit.process.commands import Limits, run
from gradekit.process.scratch import Sandbox

LIMITS = "import resource as r; print(r.getrlimit(r.RLIMIT_DATA), r.getrlimit(r.RLIMIT_CPU), r.getrlimit(r.RLIMIT_CORE))"  # noqa: E501


@pytest.fixture(params=["launcher", "prlimit", "setrlimit in the child"])
def how(request, monkeypatch):
    if request.param == "launcher":
        if shutil.which("cc") is None:
            pytest.skip("no C compiler (cc) here to build the launcher")
        assert limits.launcher() is not None, "cc is installed, yet the launcher did not build"
    elif request.param == "prlimit":
        monkeypatch.setattr(limits, "launcher", lambda: None)
        if limits.limit_prefix(None, None) is None:
            pytest.skip("prlimit cannot run here")
    else:
        monkeypatch.setattr(process, "limit_prefix", lambda memory, cpu, report=None: None)
    return request.param


def _limits_seen(limits: Limits) -> str:
    """What a command run with `limits` reads of its own: data, CPU and core limits."""
    with Sandbox(None) as box:
        result = run(
            [sys.executable, "-c", LIMITS], cwd=box.cwd, env=box.env(), timeout=10, limits=limits
        )
    assert result.exit_code == 0, result.stderr
    return result.stdout.split("\n")[0]


def test_the_command_gets_its_limits(how):
    gib = 1 << 30
    assert _limits_seen(Limits(memory=gib, cpu=7)) == f"({gib}, {gib}) (7, 8) (0, 0)"


def test_the_launcher_gives_whole_cpu_seconds_as_the_kernel_counts_them():
    if limits.launcher() is None:
        pytest.skip("the launcher cannot be built here")
    assert limits.limit_prefix(None, 1.5)[3] == "1"  # type: ignore[arg-type,index]
    seen = _limits_seen(Limits(memory=None, cpu=1.5))  # type: ignore[arg-type]
    assert seen.split(") (")[1] == "1, 2"


def test_a_file_that_cannot_be_executed_is_an_error_not_a_failure(how, tmp_path):
    bogus = tmp_path / "bogus"
    bogus.write_bytes(b"\x00\x01 not a program")
    bogus.chmod(0o755)
    with Sandbox(None) as box, pytest.raises(CommandError) as raised:
        run([str(bogus)], cwd=box.cwd, env=box.env(), timeout=10)
    assert str(raised.value).startswith(f"cannot start '{bogus}': ")
    assert "Exec format error" in str(raised.value)
    assert str(raised.value).endswith("; check the command")


def test_the_limits_leave_no_trace_in_what_the_command_sees(how):
    code = "import os, sys; print(os.getpid() == os.getpgid(0), sys.argv)"
    with Sandbox(None) as box:
        result = run([sys.executable, "-c", code, "x"], cwd=box.cwd, env=box.env(), timeout=10)
    assert result.stdout == "True ['-c', 'x']\n"  # it leads its group; its argv is its own
    assert result.argv == (sys.executable, "-c", code, "x")


def test_a_script_whose_interpreter_is_missing_is_an_error_not_a_failure(how, tmp_path):
    script = tmp_path / "script"
    script.write_text("#!/nowhere/interpreter\nprint('hi')\n")
    script.chmod(0o755)
    with Sandbox(None) as box, pytest.raises(CommandError) as raised:
        run([str(script)], cwd=box.cwd, env=box.env(), timeout=10)
    assert str(raised.value) == (
        f"cannot start '{script}': No such file or directory; check the command"
    )


def test_the_launchers_reasons_are_worded_by_python_and_odd_numbers_kept_as_written():
    said = "gradekit-limits: failed to execute x: Filename too long (errno 36)\n"
    assert limits.exec_failure(126, said) == "File name too long"
    odd = "gradekit-limits: failed to execute x: y (errno 99999999999999999999)\n"
    assert limits.exec_failure(126, odd) == "y (errno 99999999999999999999)"
    refused = "gradekit-limits: cannot set the limits: Invalid argument (errno 22)\n"
    assert limits.limit_failure(("/x/gradekit-limits-1",), 125, refused) == "Invalid argument"


def test_prlimits_refusals_are_read_from_its_whole_stderr():
    prlimit = limits._prlimit()
    if prlimit is None:
        pytest.skip("prlimit cannot run here")
    said = "prlimit: failed to set the CPU resource limit: Operation not permitted\n"
    assert limits.limit_failure((prlimit, "--core=0", "--"), 1, said) == said[9:].strip()
    unread = "prlimit: failed to parse CPU limit\n"
    assert limits.limit_failure((prlimit, "--"), 1, unread) == "failed to parse CPU limit"
    assert limits.limit_failure((prlimit, "--"), 1, said + "and the command's own\n") is None
    assert limits.limit_failure(("/x/gradekit-limits-1",), 1, said) is None  # not prlimit's


def test_a_limit_that_cannot_be_set_is_an_error_naming_the_limits_whichever_way(how):
    # The hard CPU limit (one more) does not fit in 64 bits: the launcher's setrlimit, prlimit
    # and Python's setrlimit in the child all refuse it. Not a failed command: an error.
    with Sandbox(None) as box, pytest.raises(CommandError) as raised:
        run(["/bin/true"], cwd=box.cwd, env=box.env(), timeout=10, limits=Limits(cpu=2**64 - 1))
    said = str(raised.value)
    assert said.startswith("cannot set the limits of '/bin/true': ")
    assert said.endswith(
        "; keep memory_limit and cpu_limit within the hard limits gradekit runs under "
        "(`ulimit -H -d -t`)"
    )


def test_a_command_that_fails_with_words_like_prlimits_own_is_still_a_command(how, tmp_path):
    script = tmp_path / "says"
    script.write_text("#!/bin/sh\necho 'prlimit: failed to set it' >&2\nexit 1\n")
    script.chmod(0o755)
    with Sandbox(None) as box:
        result = run([str(script)], cwd=box.cwd, env=box.env(), timeout=10)
    assert result.exit_code == 1


@pytest.mark.parametrize(
    ("said", "code"),
    [
        ("gradekit-limits: cannot set the limits: Operation not permitted (errno 1)", 125),
        ("gradekit-limits: failed to execute x: No such file or directory (errno 2)", 127),
    ],
)
@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_command_that_prints_the_launchers_words_is_a_command_that_failed(
    tmp_path, said, code, mode
):
    # The launcher reports on a pipe closed when the command starts: on stderr, agent code
    # could turn its own failure into gradekit's error (errors are counted apart from fails).
    if limits.launcher() is None:
        pytest.skip("no launcher here: prlimit says its failures on stderr")
    if mode == "bwrap" and sandbox_problem() is not None:
        pytest.skip("bubblewrap cannot run here")
    script = tmp_path / "forges"
    script.write_text(f"#!/bin/sh\necho '{said}' >&2\nexit {code}\n")
    script.chmod(0o755)
    grader = gradekit.create(
        "program", config={"command": [str(script)], "sandbox": mode, "memory_limit": "1GiB"}
    )
    result = grader.grade(gradekit.Sample(output="x", workspace=str(tmp_path)))
    assert result.error is None, result.error
    assert (result.outcome, result.details["exit_code"]) == ("fail", code)
