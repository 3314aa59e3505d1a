"""Acceptance tests: the installed `gradekit` command, run in a subprocess as a user would."""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from chromium import Browser
from cli_support import Run, gradekit_command


@pytest.fixture
def gradekit(tmp_path: Path) -> Run:
    """`gradekit(*args, cwd=tmp_path)` -> CompletedProcess with text stdout/stderr."""
    command = gradekit_command()

    def run(
        *args: str, cwd: Path | None = None, timeout: float = 120, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        # What a plain pipe shows: no colour forced or refused, no CI mode, the usual interval,
        # and not GitHub's variables of a CI job running these tests (they turn annotations
        # on): a test that wants any of them passes `env`.
        quiet = {"COLUMNS", "CI", "NO_COLOR", "FORCE_COLOR", "GRADEKIT_PROGRESS_INTERVAL"}
        environment = {
            key: value
            for key, value in os.environ.items()
            if key not in quiet and not key.startswith("GITHUB_")
        }
        environment["COLUMNS"] = "200"  # wide tables, so lines are not wrapped in assertions
        environment.update(env or {})
        return subprocess.run(
            [command, *args],
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
            stdin=subprocess.DEVNULL,
        )

    return run


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """`write("suite.yaml", text)`: a dedented file in the test's folder."""

    def put(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return put


MIXED_SUITE = """
    name: mixed
    cases:
      - name: good
        output: "42"
        expected: 42
        graders: [{kind: numeric}]
      - name: bad
        output: "41"
        expected: 42
        graders: [{kind: numeric}]
      - name: broken
        output: "x"
        graders: [{kind: code, grader: "graders:explode"}]
      - name: two-turns
        turns:
          - output: "Paris"
            expected: "Paris"
            graders: [{kind: equality}]
          - output: "Lyon"
            expected: "Lyon"
            graders:
              - {kind: equality}
              - {kind: contains, name: polite, values: [please], advisory: true}
"""

MIXED_GRADERS = """
    def explode(ctx):
        raise ValueError("no luck")
"""


@pytest.fixture
def mixed_suite(write: Callable[[str, str], Path]) -> Path:
    """A suite with a passing, a failing, an errored and a two-turn case."""
    write("graders.py", MIXED_GRADERS)
    return write("suite.yaml", MIXED_SUITE)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for a test module's pages (each `open` is a page of its own)."""
    opened = Browser()
    try:
        yield opened
    finally:
        opened.close()
