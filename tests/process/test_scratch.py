"""Scratch roots kept for the next grade only when a command left them as they were made:
real `program` grades, real folders, a real exit of a child interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hostile_graders import MODES, needs_bwrap

import gradekit
from gradekit import Sample
from gradekit.process import scratch

PY = sys.executable
# Prints where the command ran and what it found there, then does what `argv[1]` says.
PROBE = textwrap.dedent(
    """
    import json, os, sys
    home, tmp = os.environ["HOME"], os.environ["TMPDIR"]
    seen = sorted(os.listdir(home) + os.listdir(tmp) + os.listdir("."))
    print(json.dumps({"home": home, "cwd": os.getcwd(), "seen": seen}))
    action = sys.stdin.read()
    if action == "leave a file":
        open(os.path.join(home, ".planted"), "w").write("from an earlier grade")
    elif action == "leave a folder":
        os.mkdir("build")
    elif action == "open up home":
        os.chmod(home, 0o777)
    elif action == "chmod and back":  # the mode ends as it was: only the change time tells
        mode = os.stat(home).st_mode
        os.chmod(home, 0o777)
        os.chmod(home, mode)
    elif action == "set an attribute":
        os.setxattr(home, "user.note", b"from an earlier grade")
    elif action == "touch a folder":
        os.utime(tmp, ns=(10**18, 10**18))
    elif action == "create and remove":
        open("scratch.txt", "w").close()
        os.remove("scratch.txt")
    elif action == "leave a daemon":  # out of the process group: writes after the grade
        if os.fork() == 0:
            os.setsid()
            import time
            time.sleep(0.5)
            open(os.path.join(home, ".late"), "w").write("from an earlier grade's daemon")
            os._exit(0)
    """
)


def user_attributes_work(folder: Path) -> bool:
    """Whether this file system keeps `user.` extended attributes (ext4, recent tmpfs)."""
    try:
        os.setxattr(folder, "user.probe", b"1")
    except OSError:
        return False
    return True


def grade(action: str = "", mode: str = "none") -> dict[str, Any]:
    """One `program` grade without a workspace (sandbox `mode`); what its command saw."""
    grader = gradekit.create("program", config={"command": [PY, "-c", PROBE], "sandbox": mode})
    result = grader.grade(Sample(output=action))
    assert result.passed, result.message
    assert result.details is not None
    seen: dict[str, Any] = json.loads(result.details["stdout"])
    return seen


@pytest.fixture(autouse=True)
def no_spares() -> Any:
    """Each test starts and ends with no spare root (the ones it made removed)."""
    scratch._remove_spares()
    yield
    scratch._remove_spares()
    scratch.drain(10)


def test_a_root_left_as_made_is_used_again_empty() -> None:
    first = grade()
    second = grade()
    assert second["home"] == first["home"] and second["cwd"] == first["cwd"]
    assert second["seen"] == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "action",
    [
        "leave a file",
        "leave a folder",
        "open up home",
        "chmod and back",
        "set an attribute",
        "touch a folder",
        "create and remove",
    ],
)
def test_a_root_a_command_changed_is_removed_never_reused(
    action: str, mode: str, tmp_path: Path
) -> None:
    if action == "set an attribute" and not user_attributes_work(tmp_path):
        pytest.skip("this file system keeps no user extended attributes")
    first = grade(action, mode)
    second = grade("", mode)
    assert second["home"] != first["home"]
    assert second["seen"] == []  # nothing of the first grade
    scratch.drain(10)
    assert not Path(first["home"]).parent.exists()


@needs_bwrap
def test_in_bubblewrap_no_daemon_of_a_grade_outlives_it_to_write_into_a_reused_root() -> None:
    first = grade("leave a daemon", "bwrap")
    time.sleep(1.0)  # the daemon would have written by now
    second = grade("", "bwrap")
    assert second["home"] == first["home"]  # reused: the daemon died with the grade
    assert second["seen"] == []


def test_a_root_written_into_after_it_came_back_is_not_handed_out() -> None:
    first = grade()
    (Path(first["home"]) / ".late").write_text("written while the root was spare")
    second = grade()
    assert second["home"] != first["home"] and second["seen"] == []


def test_without_the_check_a_later_grade_would_see_what_an_earlier_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The attack the check stops: a command plants a file for the next grade to find.
    monkeypatch.setattr(scratch, "_as_made", lambda entry: True)
    grade("leave a file")
    assert grade()["seen"] == [".planted"]


def test_grades_at_once_get_roots_of_their_own() -> None:
    grader = gradekit.create(
        "program",
        config={"command": [PY, "-c", "import os, time; print(os.getcwd()); time.sleep(0.3)"]},
    )
    seen: list[str] = []

    def one() -> None:
        seen.append(grader.grade(Sample(output="")).details["stdout"].strip())  # type: ignore[index]

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == 3


def test_spare_roots_are_removed_when_gradekit_exits(tmp_path: Path) -> None:
    code = (
        "import gradekit, json, sys\n"
        "from gradekit import Sample\n"
        f"grader = gradekit.create('program', config={{'command': [{PY!r}, '-c', "
        "'import os; print(os.getcwd())'], 'sandbox': 'none'})\n"
        "first = grader.grade(Sample(output='')).details['stdout'].strip()\n"
        "second = grader.grade(Sample(output='')).details['stdout'].strip()\n"
        "print(json.dumps([first, second]))\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path))
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)
    assert first == second  # the second grade reused the first one's root
    assert Path(first).is_relative_to(tmp_path)
    assert os.listdir(tmp_path) == []  # and it was removed at exit


def test_a_forked_child_does_not_take_its_parents_spare_root() -> None:
    parent = grade()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write, grade()["home"].encode())
            scratch._remove_spares()  # os._exit skips atexit: remove the child's own
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child_home = pipe.read()
    os.waitpid(pid, 0)
    assert child_home != parent["home"]
    assert grade()["home"] == parent["home"]  # still the parent's to use
