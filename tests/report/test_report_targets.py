"""The report writers never replace what is not a file, and write through symlinks (the same
rules as `gradekit run`'s checks before grading, for Python callers)."""

from __future__ import annotations

import os
import stat

import pytest

import gradekit
from gradekit import WriteError
from gradekit.report.model import SuiteReport


def test_a_writer_refuses_a_fifo_and_leaves_it(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(WriteError) as raised:
        gradekit.report.write_json(SuiteReport("s", ()), tmp_path / "pipe")
    assert isinstance(raised.value, OSError)
    assert raised.value.reason == "it is a FIFO (named pipe), not a file"
    assert stat.S_ISFIFO((tmp_path / "pipe").stat().st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


def test_a_writer_goes_through_a_symlink_to_a_folder_elsewhere(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "report.md").symlink_to(tmp_path / "elsewhere" / "summary.md")
    gradekit.report.write_markdown(SuiteReport("s", ()), tmp_path / "report.md")
    assert (tmp_path / "report.md").is_symlink()
    assert (tmp_path / "elsewhere" / "summary.md").read_text().startswith("## gradekit: s")
    assert os.listdir(tmp_path / "elsewhere") == ["summary.md"]  # no temporary file left
