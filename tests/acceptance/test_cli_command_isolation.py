"""`isolation: process` on a command kind (`program`, `build`, `lint`): the command still runs
in a bubblewrap sandbox of its own, so it sees none of gradekit's secrets and none of the
suite's files, as it does without the option.

A process-isolated worker keeps gradekit's environment (a judge needs its key) and sees the
suite's folder; bubblewrap cannot nest, so a command run inside that worker would see both:
the worker's `/proc/PID/environ` and the files beside the suite."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import REPO, Run
from hostile_graders import needs_bwrap

Write = Callable[[str, str], Path]

SNOOP = """
import glob, sys
secret, answers = sys.argv[1], sys.argv[2]
seen = []
for path in glob.glob('/proc/[0-9]*/environ'):
    try:
        if secret.encode() in open(path, 'rb').read():
            seen.append(path)
    except OSError:
        pass
try:
    text = open(answers).read()
except OSError as error:
    text = type(error).__name__
print(json.dumps({'environ': seen, 'answers': text}))
"""


def _snooped(gradekit: Run, write: Write, graders: str) -> tuple[Any, str]:
    """Run a suite whose one case has `graders` (YAML lines; COMMAND: the snooping command),
    with a fresh secret in gradekit's environment and a file beside the suite."""
    secret = f"sk-live-{uuid.uuid4().hex}"
    answers = write("answers.txt", "THE EXPECTED ANSWERS")
    command = [sys.executable, "-c", "import json\n" + SNOOP, secret, str(answers)]
    header = "name: snoop\ncases:\n  - name: a\n    output: x\n    graders:\n"
    write("suite.yaml", header + graders.replace("COMMAND", json.dumps(command)))
    done = gradekit("run", "suite.yaml", "-o", "r.json", env={"OPENAI_API_KEY": secret})
    return done, secret


@needs_bwrap
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_command_sees_no_secret_and_no_suite_file_whatever_the_isolation(
    gradekit: Run, write: Write, tmp_path: Path, isolation: str
) -> None:
    done, _secret = _snooped(
        gradekit, write, f"      - {{kind: program, isolation: {isolation}, command: COMMAND}}\n"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    (result,) = report["cases"][0]["turns"][0]["results"]
    assert result["error"] is None
    seen = json.loads(result["details"]["stdout"])
    assert seen == {"environ": [], "answers": "FileNotFoundError"}


@needs_bwrap
def test_a_command_inside_a_process_isolated_composite_is_an_error_not_a_leak(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    done, secret = _snooped(
        gradekit,
        write,
        "      - kind: all\n        isolation: process\n        graders:\n"
        "          - {kind: program, command: COMMAND}\n",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    text = json.dumps(report)
    assert secret not in text
    assert "THE EXPECTED ANSWERS" not in text
    assert (
        "SandboxError: a command cannot run in its sandbox inside a process-isolated grader" in text
    )


@needs_bwrap
def test_a_process_isolated_grader_inside_a_process_isolated_composite_still_grades(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    # Only commands are refused inside a worker: other graders nest as before.
    write(
        "suite.yaml",
        "name: nest\ncases:\n  - name: a\n    output: x\n    expected: x\n    graders:\n"
        "      - kind: all\n        isolation: process\n        graders:\n"
        "          - {kind: equality, isolation: process}\n",
    )
    done = gradekit("run", "suite.yaml", "-o", "r.json")
    assert done.returncode == 0, done.stdout + done.stderr


ENV_GRADER = """
import os

from gradekit.code import GraderResult


def key(ctx):
    return GraderResult(1.0, reason=os.environ.get("OPENAI_API_KEY", "no key"))
"""


@needs_bwrap
def test_a_process_isolated_grader_keeps_gradekits_environment_as_the_readme_says(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    # The sandbox keeps a grader from the machine's files and processes, not from gradekit's
    # environment: a judge needs its API key. The README once said such graders got no secrets.
    secret = f"sk-live-{uuid.uuid4().hex}"
    write("env_grader.py", ENV_GRADER)
    write(
        "suite.yaml",
        "name: env\ncases:\n  - name: a\n    output: x\n    graders:\n"
        "      - {kind: code, grader: 'env_grader:key', isolation: process, sandbox: bwrap}\n",
    )
    done = gradekit("run", "suite.yaml", "-o", "r.json", env={"OPENAI_API_KEY": secret})
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["cases"][0]["turns"][0]["results"][0]["message"] == secret
    sandbox = next(
        line
        for line in (REPO / "README.md").read_text(encoding="utf-8").split("\n- ")
        if line.startswith("**A sandbox for agent code**")
    )
    assert "process-isolated graders keep gradekit's environment" in " ".join(sandbox.split())
