"""A workspace-only case (the agent wrote files and answered nothing, as Hyoka's prompt block
over generated code): the judge is shown the workspace's files in place of an empty OUTPUT
(issue 34). Before, it scored an empty OUTPUT and never saw the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from judge_server import JudgeServer, judged
from judge_support import Make, grade_one

from gradekit import Sample


def code_of(prompt: str) -> str:
    found = re.search(r"<<<BEGIN [A-Z]+[^>]* ([0-9a-f]{24})>>>", prompt)
    assert found is not None
    return found.group(1)


def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "app.py").write_text("def add(a, b):\n    return a + b\n")
    return folder


@pytest.mark.parametrize("output", [None, ""])
def test_no_output_shows_the_workspace_files(
    server: JudgeServer, make: Make, tmp_path: Path, output: str | None
) -> None:
    server.script(judged(9, "adds two numbers"))
    sample = Sample(input="Write add(a, b).", output=output, workspace=str(workspace(tmp_path)))
    result = grade_one(make(), sample)
    prompt = server.requests[0].prompt
    code = code_of(prompt)
    assert f'<<<BEGIN FILE "app.py" {code}>>>\ndef add(a, b):\n    return a + b\n' in prompt
    assert f"<<<BEGIN OUTPUT {code}>>>" not in prompt
    assert "There is no OUTPUT: the workspace's files are what you grade." in prompt
    assert result.outcome == "pass"
    assert result.details is not None
    assert result.details["shown"] == "the workspace's files, as the sample has no output"


def test_an_output_keeps_the_judge_on_the_output(
    server: JudgeServer, make: Make, tmp_path: Path
) -> None:
    sample = Sample(output="I wrote app.py", workspace=str(workspace(tmp_path)))
    result = grade_one(make(), sample)
    prompt = server.requests[0].prompt
    assert "<<<BEGIN OUTPUT " in prompt
    assert 'app.py"' not in prompt
    assert result.details is not None
    assert "shown" not in result.details


def test_files_asked_for_are_shown_once_beside_the_output(
    server: JudgeServer, make: Make, tmp_path: Path
) -> None:
    sample = Sample(output=None, workspace=str(workspace(tmp_path)))
    grade_one(make(include=["output", "files"]), sample)
    prompt = server.requests[0].prompt
    assert prompt.count('<<<BEGIN FILE "app.py" ') == 1
    assert "<<<BEGIN OUTPUT " in prompt  # asked for: shown, empty


def test_no_output_and_no_workspace_is_judged_as_before(server: JudgeServer, make: Make) -> None:
    grade_one(make(), Sample(input="q", output=None))
    assert "<<<BEGIN OUTPUT " in server.requests[0].prompt
