"""Report paths: a device, a FIFO or a folder is refused before anything is graded (and left as it
was), a symlink is written through to its target, and a path that cannot take a file says why."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from cli_support import Run


def _refused(done, path: str, reason: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"gradekit: cannot write {path}: {reason}; nothing was graded\n"


def test_a_device_is_refused_and_left_a_device(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    device = tmp_path / "full"
    try:  # our own node of /dev/full (1, 7): the real one is never put at risk
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    done = gradekit("run", "suite.yaml", "--junit", "full", "--resume", "r.jsonl")
    _refused(done, "full", "it is a character device, not a file; give the path of a file")
    assert stat.S_ISCHR(device.stat().st_mode)
    assert not (tmp_path / "r.jsonl").exists()


def test_a_fifo_or_a_folder_is_refused_and_left_as_it_was(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "pipe")
    done = gradekit("run", "suite.yaml", "-o", "pipe")
    _refused(done, "pipe", "it is a FIFO (named pipe), not a file; give the path of a file")
    assert stat.S_ISFIFO((tmp_path / "pipe").stat().st_mode)
    (tmp_path / "folder").mkdir()
    done = gradekit("run", "suite.yaml", "--markdown", "folder")
    _refused(done, "folder", "it is a folder, not a file; give the path of a file")
    assert (tmp_path / "folder").is_dir()
    # A FIFO as the results log would block the run forever on opening it.
    done = gradekit("run", "suite.yaml", "--resume", "pipe", timeout=30)
    _refused(done, "pipe", "it is a FIFO (named pipe), not a file; give the path of a file")


def test_a_symlinked_report_is_written_through_and_the_link_stays(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "old.json").write_text("an older report")
    (tmp_path / "report.json").symlink_to("real/old.json")
    (tmp_path / "report.xml").symlink_to("real/new.xml")  # a link to a file not made yet
    done = gradekit("run", "suite.yaml", "-o", "report.json", "--junit", "report.xml")
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "report.json").is_symlink() and (tmp_path / "report.xml").is_symlink()
    assert json.loads((tmp_path / "real" / "old.json").read_text())["suite"] == "mixed"
    assert (tmp_path / "real" / "new.xml").read_text().startswith("<?xml")
    assert sorted(os.listdir(tmp_path / "real")) == ["new.xml", "old.json"]


def test_a_path_that_takes_no_file_says_why(gradekit: Run, mixed_suite: Path) -> None:
    done = gradekit("run", "suite.yaml", "-o", "/proc/report.json")
    _refused(
        done,
        "/proc/report.json",
        "the folder /proc does not take new files (No such file or directory): it is a virtual "
        "file system such as /proc or /sys; write the report elsewhere",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "suite.yaml"], "-o suite.yaml is the suite file"),
        (["--html", "data.jsonl"], "--html data.jsonl is the dataset"),
        (["--markdown", "./sub/../data.jsonl"], "--markdown ./sub/../data.jsonl is the dataset"),
        (["-o", "x.json", "--resume", "x.json"], "-o x.json and --resume x.json are one file"),
        (["-o", "same", "--junit", "same"], "-o same and --junit same are one file"),
    ],
)
def test_a_report_path_that_names_an_input_or_another_output_is_refused(
    gradekit: Run, write, tmp_path: Path, args: list[str], message: str
) -> None:
    suite = write("suite.yaml", "graders: [{kind: equality}]\ndataset: data.jsonl\n")
    data = write("data.jsonl", '{"name": "a", "output": "1", "expected": "1"}\n')
    (tmp_path / "sub").mkdir()
    inputs = {path: path.read_bytes() for path in (suite, data)}

    done = gradekit("run", "suite.yaml", *args)

    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"gradekit: {message}"), done.stderr
    assert done.stderr.endswith("; nothing was graded\n")
    assert {path: path.read_bytes() for path in inputs} == inputs  # left as they were
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl", "sub", "suite.yaml"]


def test_a_report_may_replace_the_baseline_it_is_compared_with(
    gradekit: Run, write, tmp_path: Path
) -> None:
    write(
        "suite.yaml",
        "graders: [{kind: equality}]\ncases: [{name: a, output: '1', expected: '1'}]\n",
    )
    assert gradekit("run", "suite.yaml", "-o", "last.json").returncode == 0
    done = gradekit("run", "suite.yaml", "--baseline", "last.json", "-o", "last.json")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "last.json").read_text())["summary"]["passed"] == 1


def test_a_dangling_symlink_is_refused_and_no_folder_is_made_where_it_leads(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    (tmp_path / "report.json").symlink_to("gone/deeper/r.json")
    done = gradekit("run", "suite.yaml", "-o", "report.json")
    _refused(
        done,
        "report.json",
        "it is a symlink to gone/deeper/r.json, whose folder does not exist; create that "
        "folder, or give another path",
    )
    assert not (tmp_path / "gone").exists()
    # A dangling link on the way to the report is refused the same way.
    (tmp_path / "out").symlink_to(tmp_path / "missing")
    done = gradekit("run", "suite.yaml", "--resume", "out/sub/r.jsonl")
    _refused(
        done,
        "out/sub/r.jsonl",
        f"out is a symlink to {tmp_path / 'missing'}, which does not exist; create it, or give "
        "another path",
    )
    assert not (tmp_path / "missing").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "graders.py",
        "out",
        "report.json",
        "suite.yaml",
    ]


@pytest.mark.parametrize(
    ("flag", "path", "reason"),
    [
        ("--html", "", "an empty path names no file"),
        ("-o", "", "an empty path names no file"),
        ("--resume", "", "an empty path names no file"),
        ("-o", "-", "'-' is not standard output here"),
        ("--junit", "-", "'-' is not standard output here"),
        ("--baseline", "", "an empty path names no file"),
        ("--rerun-failed", "", "an empty path names no file"),
    ],
)
def test_an_empty_path_or_a_dash_is_refused_naming_the_flag(
    gradekit: Run, mixed_suite: Path, tmp_path: Path, flag: str, path: str, *, reason: str
) -> None:
    done = gradekit("run", "suite.yaml", flag, path, "--markdown", "r.md")

    assert done.returncode == 2, done.stderr
    named = "-o/--output" if flag == "-o" else flag
    assert f"gradekit run: error: argument {named}: {reason}" in done.stderr
    assert done.stdout == ""  # nothing graded, nothing printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graders.py", "suite.yaml"]


@pytest.mark.parametrize(("flag", "path"), [("--json", ""), ("--markdown", "-"), ("--html", "")])
def test_compare_refuses_an_empty_path_or_a_dash(
    gradekit: Run, mixed_suite: Path, tmp_path: Path, flag: str, path: str
) -> None:
    assert gradekit("run", "suite.yaml", "-o", "a.json").returncode == 1
    done = gradekit("compare", "a.json", "a.json", flag, path)
    assert done.returncode == 2, done.stderr
    assert f"gradekit compare: error: argument {flag}: " in done.stderr
    assert not (tmp_path / "-").exists()
