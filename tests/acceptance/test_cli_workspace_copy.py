"""The workspace copy of `program` / `build` / `lint`, for real: a sparse gigabyte on a small
scratch disk (a tmpfs as TMPDIR), the bounds `max_workspace_size` / `max_workspace_files`,
and the special files an agent can leave (FIFOs, sockets, devices, hard links)."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import Run
from tmpfs import small_tmpfs

Write = Callable[[str, str], Path]
PY = sys.executable

# What the command reports of its copy: each entry's kind, size and the bytes it takes.
SURVEY = (
    "import json, os, stat\n"
    "seen = {}\n"
    "for top, dirs, files in os.walk('.'):\n"
    "    for name in dirs + files:\n"
    "        path = os.path.join(top, name)[2:]\n"
    "        info = os.lstat(path)\n"
    "        kind = 'link' if stat.S_ISLNK(info.st_mode) else 'dir' if stat.S_ISDIR(info.st_mode)"
    " else 'file' if stat.S_ISREG(info.st_mode) else 'special'\n"
    "        seen[path] = [kind, info.st_size, info.st_blocks * 512, info.st_ino,"
    " oct(info.st_mode & 0o777), info.st_mtime_ns]\n"
    "print(json.dumps(seen))\n"
)


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A 64 MiB tmpfs for TMPDIR: the scratch disk the copies go to, unmounted after."""
    with small_tmpfs(tmp_path / "scratch", "64m") as folder:
        yield folder


def _grade(
    gradekit: Run, write: Write, tmp_path: Path, scratch: Path, **options: Any
) -> dict[str, Any]:
    """Run one case over `ws/` with a `program` grader printing its SURVEY; its result."""
    grader = {"kind": "program", "command": [PY, "-c", SURVEY], "sandbox": "none", **options}
    suite = {"name": "copies", "cases": [{"name": "c", "workspace": "ws", "graders": [grader]}]}
    write("suite.yaml", json.dumps(suite))
    done = gradekit(
        "run", "suite.yaml", "-o", "r.json", "--quiet", env={"TMPDIR": str(scratch)}, timeout=120
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    result: dict[str, Any] = report["cases"][0]["turns"][0]["results"][0]
    return result


def _seen(result: dict[str, Any]) -> dict[str, list[Any]]:
    assert result["error"] is None, result["error"]
    seen: dict[str, list[Any]] = json.loads(result["details"]["stdout"])
    return seen


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "main.py").write_text("print('hi')\n")
    return root


def test_a_sparse_gigabyte_is_copied_sparse_on_a_small_scratch_disk(
    gradekit: Run, write: Write, tmp_path: Path, scratch: Path
) -> None:
    root = _workspace(tmp_path)
    with open(root / "big.bin", "wb") as big:
        big.write(b"head")
        big.seek(500_000_000)
        big.write(b"middle")
        big.truncate(1 << 30)
    seen = _seen(_grade(gradekit, write, tmp_path, scratch))
    kind, size, taken, *_ = seen["big.bin"]
    assert (kind, size) == ("file", 1 << 30)
    assert taken <= 1 << 20  # its two blocks of data, not a gigabyte
    assert seen["main.py"][:2] == ["file", 12]
    assert os.listdir(scratch) == []  # the copy is gone after the grade


def test_past_max_workspace_size_the_grade_is_an_error_naming_the_option(
    gradekit: Run, write: Write, tmp_path: Path, scratch: Path
) -> None:
    root = _workspace(tmp_path)
    (root / "data").mkdir()
    for number in range(3):
        (root / "data" / f"part{number}.bin").write_bytes(os.urandom(1 << 20))
    result = _grade(gradekit, write, tmp_path, scratch, max_workspace_size="2MiB")
    assert result["passed"] is False
    error = result["error"]
    assert error.startswith(f"SandboxError: the workspace '{root}' holds more than 2 MiB of file ")
    assert "(max_workspace_size: 2097152; with data/part" in error
    assert error.endswith("raise max_workspace_size, or leave out what the command does not need")
    assert os.listdir(scratch) == []
    # The default, 1 GiB, copies them.
    assert _grade(gradekit, write, tmp_path, scratch)["error"] is None


def test_past_max_workspace_files_the_grade_is_an_error_naming_the_option(
    gradekit: Run, write: Write, tmp_path: Path, scratch: Path
) -> None:
    root = _workspace(tmp_path)
    for number in range(50):
        (root / f"empty{number}").touch()
    result = _grade(gradekit, write, tmp_path, scratch, max_workspace_files=20)
    error = result["error"]
    assert error.startswith(
        f"SandboxError: the workspace '{root}' holds more than 20 files, folders and links "
        "(max_workspace_files: 20; the copy stopped at "
    )
    assert error.endswith("raise max_workspace_files, or leave out what the command does not need")
    assert os.listdir(scratch) == []


def test_fifos_sockets_and_devices_are_left_out_links_and_modes_kept(
    gradekit: Run, write: Write, tmp_path: Path, scratch: Path
) -> None:
    root = _workspace(tmp_path)
    os.mkfifo(root / "pipe")  # opening it would wait for a writer
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "server.sock"))
    if os.geteuid() == 0:  # /dev/zero's twin: reading it never ends
        os.mknod(root / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o751)
    os.utime(root / "run.sh", ns=(1_000_000_000, 1_500_000_000))
    os.link(root / "main.py", root / "same.py")
    os.symlink("/etc/hostname", root / "outside")
    os.symlink("main.py", root / "inside")
    try:
        seen = _seen(_grade(gradekit, write, tmp_path, scratch))
    finally:
        server.close()
    assert sorted(seen) == ["inside", "main.py", "outside", "run.sh", "same.py"]
    assert seen["run.sh"][4:] == ["0o751", 1_500_000_000]
    assert seen["main.py"][3] == seen["same.py"][3]  # still one file under two names
    assert seen["outside"][:2] == ["link", len("/etc/hostname")]
    assert seen["inside"][:2] == ["link", len("main.py")]
    assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)  # the workspace itself untouched


def test_folders_nested_deeper_than_python_recurses_are_copied(
    gradekit: Run, write: Write, tmp_path: Path, scratch: Path
) -> None:
    root = _workspace(tmp_path)
    deep = str(root)
    for _ in range(1500):  # 3,000 characters: within PATH_MAX
        deep += "/d"
        os.mkdir(deep)
    Path(deep, "leaf.txt").write_text("found")
    leaf = "/".join(["d"] * 1500) + "/leaf.txt"
    code = f"print(open({leaf!r}).read())"
    try:
        result = _grade(gradekit, write, tmp_path, scratch, command=[PY, "-c", code])
    finally:  # pytest's clean-up recurses: remove the folders first, deepest first
        os.remove(Path(deep, "leaf.txt"))
        while deep != str(root):
            os.rmdir(deep)
            deep = os.path.dirname(deep)
    assert result["error"] is None, result["error"]
    assert result["details"]["stdout"] == "found\n"


def test_a_bad_bound_is_refused_at_load_naming_the_option(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _workspace(tmp_path)
    grader = {"kind": "program", "command": "true", "max_workspace_size": "lots"}
    write("suite.yaml", json.dumps({"name": "s", "cases": [{"name": "c", "graders": [grader]}]}))
    done = gradekit("run", "suite.yaml")
    assert done.returncode == 2
    assert (
        "max_workspace_size: expected a size such as 1048576, '512MiB' or '2GiB', got 'lots'"
        in (done.stderr)
    )
