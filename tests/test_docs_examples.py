"""Every fenced example in README.md and docs/*.md runs as printed, or says why it cannot.

The rules (README.md, "Examples in the docs"):

- ```yaml: a whole suite (with `cases:`, `dataset:` or `traces:`) is graded with
  `gradekit run`; it must load and no case may error.
- ```python: run as a script; it must exit 0. A block whose first line names a Python or YAML
  file (`# graders.py, beside suite.yaml`, `# arithmetic.suite.yaml`) is that file: it is
  written beside every other example of the same page (blocks naming the same file are joined
  in order), and the page's commands run it.
- ```sh and ```console: the commands (`$ ` lines of a console block) run in bash with
  `set -e -o pipefail` and a `gradekit` command on the PATH; they must exit 0.
- ```json: parses as JSON, or as JSON lines.
- ```text, ```toml and ```markdown are output or excerpts of files: shown, never run.

The HTML comment on the line before a fence, invisible on GitHub, says more:
`<!-- fragment: REASON -->` for a block that is not complete (it is not run), `<!-- run in
examples/quickstart -->` to run it in a copy of that folder (its inputs), `<!-- slow -->` (or
both, `<!-- run in examples/quickstart; slow -->`) for one that takes more than a few seconds,
`<!-- judge -->` for one whose `prompt` graders ask a judge: a real HTTP server on 127.0.0.1
(tests/fixtures/judge) answers them, through OPENAI_BASE_URL and ANTHROPIC_BASE_URL.
Each example runs in a temporary folder of its own, on the gradekit of this checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import pytest
import yaml
from judge_server import JudgeServer

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"yaml", "python", "sh", "console"}
PARSED = {"json"}
SHOWN = {"text", "toml", "markdown"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*(?P<text>.*?)\s*-->\s*$")
FILE_LINE = re.compile(r"^#\s*(?P<name>[\w./-]+\.(?:py|yaml))\b")


@attrs.frozen
class Block:
    """One fenced block of a page, with what the line before it says."""

    page: Path
    line: int
    language: str
    body: str
    marker: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def fragment(self) -> bool:
        return self.marker.startswith("fragment")

    def option(self, name: str) -> str | None:
        """The value of `run in X` (name 'run in'), or '' for a bare word such as `slow`."""
        for part in (piece.strip() for piece in self.marker.split(";")):
            if part == name:
                return ""
            if part.startswith(name + " "):
                return part[len(name) + 1 :].strip()
        return None

    @property
    def file_name(self) -> str | None:
        """The Python file this block is, when its first line names one."""
        first = self.body.split("\n", 1)[0]
        match = FILE_LINE.match(first) if self.language in {"python", "yaml"} else None
        return match["name"] if match else None


def read_blocks(page: Path) -> list[Block]:
    """The fenced blocks of `page`, in order (fences nested in a longer fence are text)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence = opening["fence"]
        closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        marker = MARKER.match(lines[index - 1]) if index else None
        info = opening["info"].strip().split()
        blocks.append(
            Block(
                page=page,
                line=index + 1,
                language=info[0] if info else "",
                body=textwrap.dedent("\n".join(lines[index + 1 : end])) + "\n",
                marker=marker["text"] if marker else "",
            )
        )
        index = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in read_blocks(page)]


def is_suite(block: Block) -> bool:
    document = yaml.safe_load(block.body)
    return isinstance(document, dict) and bool({"cases", "dataset", "traces"} & set(document))


def runnable() -> list[object]:
    chosen: list[object] = []
    for block in BLOCKS:
        if block.fragment or block.language not in RUN | PARSED or block.file_name:
            continue
        marks = [pytest.mark.slow] if block.option("slow") is not None else []
        chosen.append(pytest.param(block, id=block.id, marks=marks))
    return chosen


def test_every_block_is_run_or_marked() -> None:
    problems = []
    for block in BLOCKS:
        if block.language not in RUN | PARSED | SHOWN:
            problems.append(f"{block.id}: give the fence a language ({', '.join(sorted(RUN))})")
        elif block.fragment and not block.marker.partition(":")[2].strip():
            problems.append(f"{block.id}: say why it is a fragment (<!-- fragment: REASON -->)")
        elif block.language == "yaml" and not block.fragment and not is_suite(block):
            problems.append(
                f"{block.id}: not a whole suite (it has no cases:, dataset: or traces:); "
                "complete it or mark it <!-- fragment: REASON -->"
            )
        elif block.file_name and block.fragment:
            problems.append(f"{block.id}: a file block is never a fragment")
    assert problems == []


def test_the_markers_name_folders_that_exist() -> None:
    folders = [block.option("run in") for block in BLOCKS if block.option("run in")]
    assert [folder for folder in folders if not (ROOT / str(folder)).is_dir()] == []


def environment(bin_folder: Path) -> dict[str, str]:
    """gradekit of this checkout first on the path, a `gradekit` command, the test's own
    environment's commands (`pytest`), no CI variables."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    # The test's own environment next (its pytest, pip), then the rest of the PATH.
    env["PATH"] = os.pathsep.join(
        [str(bin_folder), str(Path(sys.executable).parent), env.get("PATH", "")]
    )
    env["NO_COLOR"] = "1"
    return env


def workspace(block: Block, tmp_path: Path) -> Path:
    """A folder with the example's inputs: the `run in` folder, the page's file blocks."""
    folder = tmp_path / "example"
    source = block.option("run in")
    if source:
        shutil.copytree(ROOT / source, folder)
    else:
        folder.mkdir()
    for other in BLOCKS:
        if other.page == block.page and other.file_name:
            with (folder / other.file_name).open("a", encoding="utf-8") as file:
                file.write(other.body)
    return folder


def gradekit_command(folder: Path) -> Path:
    folder.mkdir()
    command = folder / "gradekit"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gradekit "$@"\n', encoding="utf-8")
    command.chmod(0o755)
    return folder


def run(command: list[str], folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=folder, env=env, capture_output=True, text=True, timeout=300, stdin=None
    )


def shell_commands(block: Block) -> str:
    if block.language == "sh":
        return block.body
    return "".join(line[2:] + "\n" for line in block.body.splitlines() if line.startswith("$ "))


@pytest.mark.parametrize("block", runnable())
def test_the_example_runs_as_printed(block: Block, tmp_path: Path) -> None:
    if block.option("judge") is None:
        run_example(block, tmp_path, {})
        return
    with JudgeServer() as judge:
        judge_env = {
            "OPENAI_BASE_URL": judge.openai_url,
            "ANTHROPIC_BASE_URL": judge.url,
            "OPENAI_API_KEY": "sk-docs",
            "ANTHROPIC_API_KEY": "sk-docs",
        }
        run_example(block, tmp_path, judge_env)
    assert judge.requests, "the example never asked its judge"


def run_example(block: Block, tmp_path: Path, extra_env: dict[str, str]) -> None:
    if block.language == "json":
        lines = [line for line in block.body.splitlines() if line.strip()]
        try:
            json.loads(block.body)
        except ValueError:
            for line in lines:
                json.loads(line)
        return
    folder = workspace(block, tmp_path)
    env = environment(gradekit_command(tmp_path / "bin")) | extra_env
    if block.language == "yaml":
        (folder / "suite.yaml").write_text(block.body, encoding="utf-8")
        done = run(
            [sys.executable, "-m", "gradekit", "run", "suite.yaml", "-o", "report.json", "--quiet"],
            folder,
            env,
        )
        assert done.returncode in (0, 1), done.stdout + done.stderr
        summary = json.loads((folder / "report.json").read_text(encoding="utf-8"))["summary"]
        assert summary["errored"] == 0, done.stdout + done.stderr
    elif block.language == "python":
        (folder / "example.py").write_text(block.body, encoding="utf-8")
        done = run([sys.executable, "example.py"], folder, env)
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        script = "set -e -o pipefail\n" + shell_commands(block)
        done = run(["bash", "-c", script], folder, env)
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    (command,) = [line for line in readme.splitlines() if "'.[test]'" in line]
    assert command in ci.replace(" \\\n    ||", "\n    ||").splitlines()
