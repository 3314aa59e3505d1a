"""The GitHub Actions workflow of docs/ci.md cannot drift from gradekit: the page shows the
shipped file, every `gradekit` command in it is one gradekit's own parser accepts, and the
commands do what the page says when run, as the workflow runs them, on a suite before and after
a change."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from cli_support import REPO, Run

from gradekit.cli.parser import _parser

WORKFLOW = REPO / "examples" / "ci" / "github-workflow.yml"


def _steps() -> list[dict]:
    data = yaml.safe_load(WORKFLOW.read_text())
    (job,) = data["jobs"].values()
    return job["steps"]


def _commands(script: str) -> list[list[str]]:
    """Every `gradekit ...` command line of a step's script, split as the shell would."""
    joined = re.sub(r"\\\n\s*", " ", script)
    found = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "gradekit":
            found.append(words)
    return found


def _parse(words: list[str]) -> argparse.Namespace:
    try:
        return _parser().parse_args(words[1:])
    except SystemExit:
        pytest.fail(f"gradekit refuses the workflow's command: {shlex.join(words)}")


def test_the_page_shows_the_shipped_workflow() -> None:
    page = (REPO / "docs" / "ci.md").read_text()
    (block,) = re.findall(r"```yaml\n(.*?)```", page, re.S)
    assert block == WORKFLOW.read_text()
    assert "(ci.md)" in (REPO / "docs" / "index.md").read_text()
    assert "(docs/ci.md)" in (REPO / "README.md").read_text()


def test_every_gradekit_command_of_the_workflow_is_accepted() -> None:
    commands = {step["name"]: _commands(step["run"]) for step in _steps() if "run" in step}
    graded = {name: found for name, found in commands.items() if found}
    assert set(graded) == {"Grade, against main", "Grade"}
    for (words,) in graded.values():
        args = _parse(words)
        assert args.command == "run" and args.min_pass_rate == 0.8
    assert _parse(graded["Grade, against main"][0]).baseline == "baseline/report.json"
    # The parser is not lenient: a misspelt option is refused, so the check can fail.
    with pytest.raises(BaseException, match="refuses"):
        _parse([*graded["Grade"][0], "--basline", "x.json"])


def _script(name: str) -> str:
    (step,) = [step for step in _steps() if step.get("name") == name]
    return step["run"]


SUITE = """
name: agent
graders: [{kind: equality}]
cases:
  - {name: greets, output: "hello", expected: "hello"}
  - {name: counts, output: "3", expected: "3"}
  - {name: spells, output: "cat", expected: "cat"}
  - {name: adds, output: "5", expected: "5"}
  - {name: waves, output: "bye", expected: "bye"}
"""


def test_the_workflows_commands_run_on_main_then_on_a_pull_request(
    tmp_path: Path, gradekit: Run
) -> None:
    (tmp_path / "evals").mkdir()
    suite = tmp_path / "evals" / "suite.yaml"
    suite.write_text(SUITE.lstrip())
    (main_command,) = _commands(_script("Grade"))
    (pull_command,) = _commands(_script("Grade, against main"))
    on_main = gradekit(*main_command[1:], env={"GITHUB_ACTIONS": "true"})
    assert on_main.returncode == 0, on_main.stderr
    (tmp_path / "baseline").mkdir()  # what the download step leaves
    shutil.copy(tmp_path / "report.json", tmp_path / "baseline" / "report.json")

    # The pull request breaks one case of five: the pass rate (80%) meets the gate, but the
    # case passed on main, so the run fails; the job's summary and the comment say so.
    suite.write_text(SUITE.lstrip().replace('output: "3"', 'output: "4"'))
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    on_pull = gradekit(*pull_command[1:], env=env)
    assert on_pull.returncode == 1, on_pull.stderr
    assert "1 case regressed against baseline/report.json: counts" in on_pull.stderr
    assert "::error file=evals/suite.yaml,line=5" in on_pull.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"]["baseline"]["regressed"] == 1
    assert "**Regressed (1)**" in summary.read_text()
    fitted = subprocess.run(
        ["bash", "-e", "-c", _script("Fit the summary into a comment")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert fitted.returncode == 0, fitted.stderr
    comment = (tmp_path / "comment.md").read_text()
    assert comment == (tmp_path / "report.md").read_text()
    assert "### Compared with the baseline baseline/report.json" in comment
