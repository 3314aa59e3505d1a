"""Hostile commands: every escape works with `sandbox: none` and fails in bubblewrap.

The commands are what an agent could leave in its workspace; each attack is run under both
modes, so a sandbox that stopped protecting would fail here.
"""

from __future__ import annotations

import ast
import errno
import os
import shutil
import socket
import sys
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hostile_graders import MODES, kill_all, lingering, marker, needs_bwrap, sleepers_code

import gradekit
from gradekit import Sample

Workspace = Callable[[Mapping[str, str]], Path]
PY = sys.executable


def _tmp_tops_gradekit_needs() -> set[str]:
    """Top folders of /tmp that the sandbox binds read-only because gradekit itself lives
    there (a checkout and its venv under /tmp, as on some CI machines)."""
    needed = {sys.prefix, os.path.dirname(PY), str(Path(gradekit.__file__).resolve().parent)}
    return {Path(path).parts[2] for path in needed if Path(path).parts[1:2] == ("tmp",)}


SHADOW = Path("/etc/shadow")


def run(code: str, mode: str, root: Path | None = None, **config: Any) -> gradekit.GradeResult:
    grader = gradekit.create(
        "program", config={"command": [PY, "-c", code], "sandbox": mode, **config}
    )
    return grader.grade(Sample(workspace=None if root is None else str(root)))


def stdout(result: gradekit.GradeResult) -> str:
    assert result.details is not None, result.error
    text: str = result.details["stdout"]
    return text


@pytest.mark.skipif(not os.access(SHADOW, os.R_OK), reason="reading /etc/shadow needs root")
@pytest.mark.parametrize("mode", MODES)
def test_a_symlink_to_etc_shadow_in_the_workspace(workspace: Workspace, mode: str) -> None:
    root = workspace({"README.md": "notes\n"})
    os.symlink(SHADOW, root / "notes.txt")
    result = run("print(open('notes.txt').read(), end='')", mode, root)
    if mode == "none":
        assert stdout(result) == SHADOW.read_text()  # the attack works without the sandbox
    else:
        # An unreadable stand-in (the host's /dev/null on a nodev mount) hides the secret.
        assert stdout(result) == ""
        assert result.details is not None
        assert (
            "PermissionError: [Errno 13] Permission denied: 'notes.txt'" in result.details["stderr"]
        )


@pytest.mark.parametrize("mode", MODES)
def test_writing_outside_the_workspace(workspace: Workspace, tmp_path: Path, mode: str) -> None:
    root = workspace({"answer.txt": "the agent's answer"})
    targets = [
        root / "answer.txt",  # the agent's own files, by absolute path past the copy
        tmp_path / "planted.txt",  # the host's /tmp
        Path(sys.prefix) / f"planted-{uuid.uuid4().hex}.txt",  # gradekit's own virtualenv
    ]
    code = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        open(path, 'w').write('planted')\n"
        "        print('wrote')\n"
        "    except OSError as error:\n"
        "        print('refused', error.errno)\n"
    )
    grader = gradekit.create(
        "program", config={"command": [PY, "-c", code, *map(str, targets)], "sandbox": mode}
    )
    try:
        lines = stdout(grader.grade(Sample(workspace=str(root)))).splitlines()
        changed = [path.exists() and path.read_text() == "planted" for path in targets]
    finally:
        targets[2].unlink(missing_ok=True)
    if mode == "none":
        assert lines == ["wrote", "wrote", "wrote"]
        assert changed == [True, True, True]
    else:
        # The originals are not there; the system and gradekit's Python are read-only.
        assert lines == [
            f"refused {errno.ENOENT}",
            f"refused {errno.ENOENT}",
            f"refused {errno.EROFS}",
        ]
        assert changed == [False, False, False]
        assert (root / "answer.txt").read_text() == "the agent's answer"


@pytest.mark.parametrize("mode", MODES)
def test_reading_the_home_folder_and_the_hosts_tmp(tmp_path: Path, mode: str) -> None:
    home_file = Path.home() / f".gradekit-probe-{uuid.uuid4().hex}"
    tmp_file = tmp_path / "left-in-tmp.txt"
    home_file.write_text("credentials")
    tmp_file.write_text("scratch of another job")
    # The listing first and the reads last: a busy host /tmp makes a long listing, and only the
    # tail of a command's output is kept.
    code = (
        "import os, sys\n"
        "print(sorted(os.listdir('/tmp')) == [] or sorted(os.listdir('/tmp')))\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        print(open(path).read())\n"
        "    except OSError as error:\n"
        "        print('refused', error.errno)\n"
    )
    try:
        grader = gradekit.create(
            "program",
            config={"command": [PY, "-c", code, str(home_file), str(tmp_file)], "sandbox": mode},
        )
        lines = stdout(grader.grade(Sample())).splitlines()
    finally:
        home_file.unlink()
    if mode == "none":
        assert lines[-2:] == ["credentials", "scratch of another job"]
    else:
        assert lines[-2:] == [f"refused {errno.ENOENT}", f"refused {errno.ENOENT}"]
        # /tmp holds nothing but the sandbox's own scratch folder (HOME, TMPDIR, the copy), and
        # the folders of gradekit's own Python and code when they live under /tmp.
        listed = [] if lines[0] == "True" else ast.literal_eval(lines[0])
        others = [name for name in listed if name not in _tmp_tops_gradekit_needs()]
        assert len(others) == 1 and others[0].startswith("gradekit-"), listed


@pytest.mark.parametrize("mode", MODES)
def test_a_unix_socket_on_the_host_with_network_false(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "agent.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    code = (
        "import socket, sys\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX).connect(sys.argv[1])\n"
        "    print('connected')\n"
        "except OSError as error:\n"
        "    print('refused', error.errno)\n"
    )
    try:
        grader = gradekit.create(
            "program",
            config={"command": [PY, "-c", code, str(path)], "sandbox": mode, "network": False},
        )
        result = grader.grade(Sample())
    finally:
        server.close()
    # In bubblewrap without the network, no Unix socket can even be made (seccomp).
    expected = "connected" if mode == "none" else f"refused {errno.EACCES}"
    assert stdout(result).strip() == expected


@needs_bwrap
def test_an_abstract_unix_socket_is_reachable_only_with_the_network() -> None:
    name = f"\0gradekit-test-{uuid.uuid4().hex}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen()
    code = (
        "import socket, sys\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX).connect('\\0' + sys.argv[1])\n"
        "    print('connected')\n"
        "except OSError as error:\n"
        "    print('refused', error.errno)\n"
    )
    outcomes = {}
    try:
        for network in (True, False):
            grader = gradekit.create(
                "program",
                config={
                    "command": [PY, "-c", code, name[1:]],
                    "sandbox": "bwrap",
                    "network": network,
                },
            )
            outcomes[network] = stdout(grader.grade(Sample())).strip()
    finally:
        server.close()
    assert outcomes == {True: "connected", False: f"refused {errno.EACCES}"}


@pytest.mark.parametrize("hang", [False, True], ids=["exits", "times-out"])
@pytest.mark.parametrize("mode", MODES)
def test_a_setsid_grandchild_after_the_grade(mode: str, hang: bool) -> None:
    duration = marker()
    code = sleepers_code(duration, 2, detach=True, hang=hang)
    result = run(code, mode, timeout=1 if hang else 10)
    assert result.details is not None and result.details["timed_out"] is hang
    assert result.details["stdout"] == "started\n"
    left = lingering(duration, wait=0.0 if mode == "none" else 2.0)
    kill_all(left)
    if mode == "none":
        assert len(left) == 2  # `setsid` left the process group: the kill missed them
    else:
        assert left == []  # the PID namespace died with its leader


@needs_bwrap
def test_the_workspace_copy_home_and_tmpdir_are_writable(workspace: Workspace) -> None:
    root = workspace({"data.txt": "original"})
    code = (
        "import os, tempfile\n"
        "open('data.txt', 'w').write('changed')\n"
        "open(os.path.join(os.environ['HOME'], 'h'), 'w').write('x')\n"
        "tempfile.NamedTemporaryFile(dir=os.environ['TMPDIR']).write(b'x')\n"
        "print(open('data.txt').read())\n"
    )
    result = run(code, "bwrap", root)
    assert result.outcome == "pass", result.details
    assert stdout(result).split()[0] == "changed"
    assert (root / "data.txt").read_text() == "original"


@needs_bwrap
def test_build_and_lint_run_in_the_sandbox_too(workspace: Workspace) -> None:
    root = workspace({"ok.py": "x = 1\n"})
    os.symlink(SHADOW, root / "leak")
    sample = Sample(workspace=str(root))
    command = ["sh", "-c", "cat leak /etc/gshadow; true"]
    build = gradekit.create("build", config={"command": command, "sandbox": "bwrap"}).grade(sample)
    assert build.outcome == "pass"
    assert build.details is not None and build.details["stdout"] == ""
    assert build.details["stderr"] == (
        "cat: leak: Permission denied\ncat: /etc/gshadow: Permission denied\n"
    )
    # A custom linter that prints the link's target: refused in the sandbox, read without.
    peek = {"name": "peek", "command": ["cat", "leak"]}
    lint = gradekit.create("lint", config={"linters": [peek], "sandbox": "bwrap"}).grade(sample)
    assert lint.details is not None
    assert lint.details["linters"][0]["output"].endswith("cat: leak: Permission denied\n")
    if os.access(SHADOW, os.R_OK):
        bare = gradekit.create("lint", config={"linters": [peek], "sandbox": "none"})
        assert bare.grade(sample).outcome == "pass"


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_cargo_build_script_cannot_read_tokens_or_replace_the_toolchain(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    cargo_home = tmp_path / "cargo-home"
    (cargo_home / "bin").mkdir(parents=True)
    (cargo_home / "credentials.toml").write_text('[registry]\ntoken = "secret"\n')
    monkeypatch.setenv("CARGO_HOME", str(cargo_home))
    build_rs = (
        "fn main() {\n"
        '    let home = std::env::var("CARGO_HOME").unwrap();\n'
        '    let read = std::fs::read_to_string(format!("{home}/credentials.toml")).is_ok();\n'
        '    let wrote = std::fs::write(format!("{home}/bin/cargo-planted"), "x").is_ok();\n'
        '    if read || wrote { panic!("escaped: read={read} wrote={wrote}"); }\n'
        "}\n"
    )
    manifest = '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'
    root = workspace(
        {"Cargo.toml": manifest, "build.rs": build_rs, "src/main.rs": "fn main() {}\n"}
    )
    grader = gradekit.create("build", config={"language": "rust", "sandbox": mode, "timeout": 120})
    result = grader.grade(Sample(workspace=str(root)))
    if mode == "none":
        assert result.outcome == "fail"
        assert result.details is not None
        assert "escaped: read=true wrote=true" in result.details["stderr"]
    else:
        assert result.outcome == "pass", result.details
        assert not (cargo_home / "bin" / "cargo-planted").exists()
