"""Escapes from the sandbox through the kernel's interfaces, tried as root and as a user.

Each escape is agent code that prints `escaped` when the attack worked and `refused ERRNO`
when the kernel refused it. Every attack is harmless on the host: a kernel tunable is opened
for writing and closed unwritten, a keyring is only looked up, a traced or unshared process is
a child of the attack that ends at once. As root, each escape works with `sandbox: none` and
fails in bubblewrap; run by an unprivileged user, gradekit's sandbox refuses each one too.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_graders import MODES, needs_bwrap

import gradekit
from gradekit import Sample

PY = sys.executable
ROOT = os.geteuid() == 0
NOBODY = 65534

_SYSCALLS = {"x86_64": {"keyctl": 250}, "aarch64": {"keyctl": 219}}.get(platform.machine(), {})


def _opened_for_writing(path: str) -> str:
    return f"""
import os
try:
    os.close(os.open({path!r}, os.O_WRONLY))
    print("escaped")
except OSError as error:
    print("refused", error.errno)
"""


def _first_existing(*paths: str) -> str | None:
    return next((path for path in paths if os.path.exists(path)), None)


_SYSFS = _first_existing(
    "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/profiling", "/sys/power/state"
)

_IN_A_CHILD = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def checked(result):
    if result != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read)
    code = 0
    try:
        {body}
    except OSError as error:
        code = error.errno
    os.write(write, str(code).encode())
    os._exit(0)
os.close(write)
code = int(os.read(read, 16) or b"-1")
os.waitpid(pid, 0)
print("escaped" if code == 0 else f"refused {{code}}")
"""


def _in_a_child(body: str) -> str:
    """`body` run in a forked child, each call raising OSError on failure."""
    return _IN_A_CHILD.format(body=textwrap.indent(textwrap.dedent(body), " " * 8).strip())


_READ = """
import os
try:
    with open({path!r}, "rb") as file:
        file.read(1)
    print("escaped")
except OSError as error:
    print("refused", error.errno)
"""

ESCAPES: dict[str, tuple[str, str | None]] = {
    # name: (agent code, why it cannot be tried on this host, or None)
    # the first round's (more in test_sandbox.py): the machine's secrets
    "read /etc/shadow": (
        _READ.format(path="/etc/shadow"),
        None if os.path.exists("/etc/shadow") else "no /etc/shadow here",
    ),
    # this round's: the kernel's interfaces
    "write /proc/sys (vm.swappiness)": (
        _opened_for_writing("/proc/sys/vm/swappiness"),
        None if os.path.exists("/proc/sys/vm/swappiness") else "no vm.swappiness here",
    ),
    "write kernel.core_pattern": (
        _opened_for_writing("/proc/sys/kernel/core_pattern"),
        None,
    ),
    "write /proc/sysrq-trigger": (
        _opened_for_writing("/proc/sysrq-trigger"),
        None if os.path.exists("/proc/sysrq-trigger") else "this kernel has no sysrq-trigger",
    ),
    "write /sys": (
        _opened_for_writing(_SYSFS or "/sys/none"),
        None if _SYSFS else "no writable sysfs file known here",
    ),
    "read the host's keyrings (keyctl)": (
        f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
# KEYCTL_GET_KEYRING_ID of KEY_SPEC_USER_KEYRING: keyrings are not namespaced
found = libc.syscall({_SYSCALLS.get("keyctl", -1)}, 0, -4, 0)
print("escaped" if found >= 0 else f"refused {{ctypes.get_errno()}}")
""",
        None if "keyctl" in _SYSCALLS else f"no keyctl number known on {platform.machine()}",
    ),
    "ptrace a process": (
        """
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
attached = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
code = ctypes.get_errno()
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("escaped" if attached == 0 else f"refused {code}")
""",
        None,
    ),
    "a new user namespace (capabilities back)": (
        _in_a_child("checked(libc.unshare(0x10000000))  # CLONE_NEWUSER"),
        None,
    ),
    "mount": (
        _in_a_child(
            """
            checked(libc.unshare(0x00020000))  # CLONE_NEWNS: a private copy of the mounts
            checked(libc.mount(None, b"/", None, 0x4000 | 0x40000, None))  # MS_REC|MS_PRIVATE
            """
        ),
        None,
    ),
}

ESCAPE_NAMES = [
    pytest.param(name, marks=pytest.mark.skipif(why is not None, reason=why or ""))
    for name, (_, why) in ESCAPES.items()
]


def _program(code: str, mode: str, **config: object) -> str:
    grader = gradekit.create(
        "program", config={"command": [PY, "-c", code], "sandbox": mode, **config}
    )
    result = grader.grade(Sample())
    assert result.details is not None, result.error
    assert result.details["exit_code"] == 0, result.details["stderr"]
    text: str = result.details["stdout"]
    return text.strip()


@pytest.mark.skipif(not ROOT, reason="the escapes as root need root")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ESCAPE_NAMES)
def test_an_escape_as_root(name: str, mode: str) -> None:
    outcome = _program(ESCAPES[name][0], mode)
    if mode == "none":
        assert outcome == "escaped"  # the attack works without the sandbox
    else:
        assert outcome.startswith("refused "), outcome


@pytest.fixture
def socket_on_path() -> Iterator[tuple[Path, socket.socket]]:
    """A Unix socket served by the host in a folder the command finds on its PATH, so that
    the sandbox shows the folder (read-only)."""
    folder = Path(tempfile.mkdtemp(prefix="gradekit-socket-"))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(folder / "agent.sock"))
        server.listen()
        yield folder, server
    finally:
        server.close()
        shutil.rmtree(folder)


_CONNECT = """
import os, socket
try:
    socket.socket(socket.AF_UNIX).connect(os.environ["SOCKET"])
    print("escaped")
except OSError as error:
    print("refused", error.errno)
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_unix_socket_in_a_read_only_folder_with_network_false(
    socket_on_path: tuple[Path, socket.socket], mode: str
) -> None:
    folder, _ = socket_on_path
    env = {"PATH": f"{folder}:{os.environ.get('PATH', '')}", "SOCKET": str(folder / "agent.sock")}
    outcome = _program(_CONNECT, mode, network=False, env=env)
    if mode == "none":
        assert outcome == "escaped"
    else:
        assert outcome == "refused 13"  # EACCES: no Unix socket is made without the network


@needs_bwrap
def test_a_unix_socket_in_a_read_only_folder_connects_with_the_network(
    socket_on_path: tuple[Path, socket.socket],
) -> None:
    # With the network on, the sandbox shares the host's: a socket it shows is reachable.
    folder, _ = socket_on_path
    env = {"PATH": f"{folder}:{os.environ.get('PATH', '')}", "SOCKET": str(folder / "agent.sock")}
    assert _program(_CONNECT, "bwrap", network=True, env=env) == "escaped"


@needs_bwrap
def test_threads_processes_and_socketpairs_still_work_in_the_filter() -> None:
    code = """
import multiprocessing, socket, subprocess, sys, threading
done = []
thread = threading.Thread(target=lambda: done.append(1))
thread.start(); thread.join()
left, right = socket.socketpair()
left.sendall(b"x")
child = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
with multiprocessing.get_context("fork").Pool(2) as pool:
    squares = pool.map(abs, [-1, -2])
print(done, right.recv(1), child.stdout.strip(), squares)
"""
    assert _program(code, "bwrap", network=False) == "[1] b'x' 42 [1, 2]"


_AS_A_USER = """
import json, sys
import gradekit
from gradekit import Sample
outcomes = {}
for name, code in json.loads(sys.argv[1]).items():
    grader = gradekit.create(
        "program", config={"command": [sys.executable, "-c", code], "sandbox": "bwrap"}
    )
    result = grader.grade(Sample())
    outcomes[name] = result.details["stdout"].strip() if result.details else result.error
print(json.dumps(outcomes))
"""


def _python_for_a_user() -> str | None:
    """A Python of this version that another user may run: this one, unless it lives in a
    home folder others cannot enter (pyenv's in /root), then the system's."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (os.path.realpath(PY), f"/usr/bin/{version}"):
        folders = Path(candidate).parents
        if os.path.exists(candidate) and all(os.stat(folder).st_mode & 0o001 for folder in folders):
            return candidate
    return None


USER_PYTHON = _python_for_a_user()


@needs_bwrap
@pytest.mark.skipif(not ROOT or shutil.which("setpriv") is None, reason="needs root and setpriv")
@pytest.mark.skipif(USER_PYTHON is None, reason="no Python here that another user may run")
def test_the_escapes_as_an_unprivileged_user() -> None:
    assert USER_PYTHON is not None
    home = Path(tempfile.mkdtemp(prefix="gradekit-user-"))
    try:
        os.chown(home, NOBODY, NOBODY)
        codes = {name: code for name, (code, why) in ESCAPES.items() if why is None}
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        # gradekit and its dependencies, as this test's Python imports them
        path = [str(Path(gradekit.__file__).parents[1]), sysconfig.get_paths()["purelib"]]
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "PYTHONPATH": os.pathsep.join(path),
        }
        run = subprocess.run(
            [*argv, USER_PYTHON, "-c", _AS_A_USER, json.dumps(codes)],
            capture_output=True,
            text=True,
            env=env,
            cwd=home,
            timeout=120,
        )
    finally:
        shutil.rmtree(home)
    assert run.returncode == 0, run.stderr
    outcomes = json.loads(run.stdout)
    assert set(outcomes) == set(codes)
    escaped = {name: outcome for name, outcome in outcomes.items() if "refused" not in outcome}
    assert escaped == {}
