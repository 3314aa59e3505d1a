"""`sandbox: auto | bwrap | none`: which one applies, and what happens where bubblewrap
cannot run (not installed, or not allowed to create namespaces)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_graders import needs_bwrap

import gradekit
from gradekit import ConfigError, GraderDefaults, Sample, load_suite, run_suite
from gradekit.core.errors import SandboxError
from gradekit.process.bubblewrap import _probe

PY = sys.executable
# Prints whether it runs in bubblewrap: there, PID 1 of its PID namespace is bwrap.
WHERE = (
    "import os; pid1 = open('/proc/1/cmdline').read().split(chr(0))[0]\n"
    "print('jailed' if os.path.basename(pid1) == 'bwrap' else 'bare')"
)
NOT_INSTALLED = (
    "bubblewrap cannot run here: bwrap is not installed (not found on PATH); install "
    "bubblewrap (Debian: apt-get install bubblewrap) where it may create namespaces, or set "
    "sandbox: auto or none"
)


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A PATH without bubblewrap (the commands below are given by their full path)."""
    _probe.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    yield
    _probe.cache_clear()


def where(result: gradekit.GradeResult) -> str:
    assert result.details is not None, result.error
    text: str = result.details["stdout"].strip()
    return text


@needs_bwrap
def test_which_sandbox_applies(tmp_path: Path) -> None:
    command = json.dumps([PY, "-c", WHERE])
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        textwrap.dedent(
            f"""
            name: modes
            sandbox: none
            graders:
              - {{kind: program, name: unset, command: {command}}}
              - {{kind: program, name: own_none, sandbox: none, command: {command}}}
              - {{kind: program, name: own_bwrap, sandbox: bwrap, command: {command}}}
            cases:
              - name: one
                output: ""
            """
        )
    )
    suite = load_suite(suite_file)

    def outcome(**options: str) -> dict[str, str]:
        run = run_suite(suite, defaults=GraderDefaults(**options))  # type: ignore[arg-type]
        results = run.cases[0].turns[0].results
        return {record.result.name: where(record.result) for record in results}

    # The entry's own, else the run's, else the suite's, else auto.
    assert outcome() == {"unset": "bare", "own_none": "bare", "own_bwrap": "jailed"}
    assert outcome(sandbox="bwrap") == {
        "unset": "jailed",
        "own_none": "bare",
        "own_bwrap": "jailed",
    }
    unset = gradekit.create("program", config={"command": [PY, "-c", WHERE]})
    assert where(unset.grade(Sample())) == "jailed"  # auto, with bubblewrap installed


def test_bwrap_where_it_is_not_installed_is_a_load_error(no_bwrap: None, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        gradekit.create("program", config={"command": [PY, "-c", WHERE], "sandbox": "bwrap"})
    assert [str(p) for p in caught.value.problems] == [f"$.sandbox: {NOT_INSTALLED}"]
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        "sandbox: bwrap\n"
        "graders:\n"
        "  - {kind: equality, isolation: process, sandbox: bwrap}\n"
        "cases: [{name: a, output: x, expected: x}]\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(suite_file)
    assert [str(p) for p in caught.value.problems] == [
        f"{suite_file}:1:10: sandbox: {NOT_INSTALLED}",
        f"{suite_file}:3:51: graders[0].sandbox: {NOT_INSTALLED}",
    ]


def test_bwrap_for_a_run_where_it_is_not_installed_grades_nothing(
    no_bwrap: None, tmp_path: Path
) -> None:
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        "cases: [{name: a, output: x, expected: x, graders: [{kind: equality}]}]\n"
    )
    with pytest.raises(SandboxError) as caught:
        run_suite(load_suite(suite_file), defaults=GraderDefaults(sandbox="bwrap"))
    assert str(caught.value) == NOT_INSTALLED
    cli = subprocess.run(
        [str(Path(PY).parent / "gradekit"), "run", str(suite_file), "--sandbox", "bwrap"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/nonexistent"},
        stdin=subprocess.DEVNULL,
    )
    assert cli.returncode == 2
    assert cli.stderr == f"gradekit: --sandbox bwrap: {NOT_INSTALLED}; nothing was graded\n"


def test_auto_without_bubblewrap_runs_bare_and_says_so_once(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import gradekit
        from gradekit import Sample
        grader = gradekit.create("program", config={{"command": [{PY!r}, "-c", {WHERE!r}]}})
        for _ in range(3):
            print(grader.grade(Sample()).details["stdout"].strip())
        """
    )
    done = subprocess.run(
        [PY, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/nonexistent"},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["bare"] * 3
    assert done.stderr == (
        "gradekit: warning: agent code runs without a sandbox (sandbox: auto): bwrap is not "
        "installed (not found on PATH); install bubblewrap, or set sandbox: none to run "
        "without one knowingly\n"
    )


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="drops root's capabilities to forbid namespaces")
def test_bubblewrap_that_cannot_create_namespaces_is_named() -> None:
    # Inside a sandbox without capabilities, a nested bubblewrap really cannot start.
    script = textwrap.dedent(
        f"""
        import gradekit
        from gradekit import ConfigError, Sample
        try:
            gradekit.create("program", config={{"command": ["true"], "sandbox": "bwrap"}})
        except ConfigError as error:
            print(error.problems[0])
        auto = gradekit.create("program", config={{"command": [{PY!r}, "-c", {WHERE!r}]}})
        print(auto.grade(Sample()).outcome)
        """
    )
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    outer = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # A checkout and its venv under /tmp (some CI machines) stay visible under the empty /tmp.
    for own in {sys.prefix, str(Path(gradekit.__file__).resolve().parents[2])}:
        if own.startswith("/tmp/"):
            outer += ["--ro-bind", own, own]
    outer += ["--unshare-pid", "--cap-drop", "ALL", "--die-with-parent"]
    done = subprocess.run(
        [*outer, PY, "-c", script], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    problem, outcome = done.stdout.splitlines()
    assert problem == (
        f"$.sandbox: bubblewrap cannot run here: {bwrap} cannot create a sandbox here: bwrap: "
        "Creating new namespace failed: Operation not permitted; install bubblewrap (Debian: "
        "apt-get install bubblewrap) where it may create namespaces, or set sandbox: auto or none"
    )
    assert outcome == "pass"
    assert "Creating new namespace failed" in done.stderr  # the warning names the cause
