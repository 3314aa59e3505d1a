"""Bubblewrap: the sandbox that agent-written code runs in (`sandbox: auto | bwrap | none`).

`jail(...)` builds the `bwrap` argv prefix of one command. What the command then sees (the
promise stated in docs/agent-graders.md, section "The sandbox"):

- new mount, PID, IPC and UTS namespaces, and a new network namespace unless the network is
  shared; `--die-with-parent`, `--new-session`, every capability dropped;
- a root of its own (a fresh tmpfs) holding only: the system folders (`/usr`, `/bin`, `/sbin`,
  `/lib*`, `/opt`, `/etc`) read-only, where every file and folder of `/etc` that other users
  may not read (`/etc/shadow`, `/etc/gshadow`, `/etc/ssl/private`...) is replaced by an empty
  one; a fresh `/dev`, the `/proc` of its own PID namespace; an empty `/tmp` and `/var/tmp`;
  the folders the caller lists read-only or writable, at their own paths.

Home folders are never bound (nor `/` or `/home`): a listed folder that is one is skipped.
Whether bubblewrap works here is probed once per process (`problem`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import Final, Literal

import attrs

from gradekit._process import SandboxError

__all__ = [
    "MODES",
    "NO_MOUNTS",
    "Mode",
    "Mounts",
    "check_mode",
    "jail",
    "problem",
    "requested_problem",
    "uses_bwrap",
]

Mode = Literal["auto", "bwrap", "none"]
MODES: Final = ("auto", "bwrap", "none")

INSIDE: Final = "GRADEKIT_SANDBOXED"
"""Set (to 1) in the environment of a process-isolated grader's child in bubblewrap: a
sandbox cannot nest, and the child's own sandbox already holds what the grader runs."""
NESTED: Final = "this process runs in gradekit's sandbox already, which cannot nest"

SYSTEM_FOLDERS: Final = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt", "etc")
ALWAYS_HIDDEN: Final = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
_PROBE_SECONDS: Final = 10.0

_warned = False
_warn_lock = threading.Lock()


@attrs.frozen
class Mounts:
    """Folders a toolchain needs in the sandbox besides the system and the workspace:
    `readonly` ones (a toolchain's own files), `writable` ones (its caches, shared between
    runs) and `hidden` files inside them (credentials)."""

    readonly: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()


NO_MOUNTS: Final = Mounts()


def check_mode(value: object) -> str | None:
    """None for a valid mode (or None); else what is wrong with `value`."""
    if value is None or value in MODES:
        return None
    return f"expected one of 'auto', 'bwrap', 'none', got {value!r}"


def problem() -> str | None:
    """Why bubblewrap cannot run a sandbox on this machine, or None when it can.

    Probed once per process by starting `true` in a sandbox with every feature gradekit uses.
    """
    return _probe()[1]


@functools.cache
def _probe() -> tuple[str | None, str | None]:
    """(the bwrap executable, None) when it works; (None, why not) when it does not."""
    if os.environ.get(INSIDE) == "1":
        return None, NESTED
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bwrap is not installed (not found on PATH)"
    true = shutil.which("true") or "/bin/true"
    argv = [*jail(readonly=[os.path.dirname(true)], network=False, bwrap=bwrap), true]
    try:
        probe = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_SECONDS, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"{bwrap} cannot start: {error}"
    if probe.returncode != 0:
        reason = probe.stderr.strip() or f"exit code {probe.returncode}"
        return None, f"{bwrap} cannot create a sandbox here: {reason}"
    return bwrap, None


def requested_problem(mode: str | None) -> str | None:
    """For an explicit `sandbox: bwrap` on a machine where bubblewrap cannot run: what to fix."""
    if mode != "bwrap":
        return None
    cause = problem()
    if cause is None or cause == NESTED:  # the sandbox this process runs in is bubblewrap's
        return None
    return (
        f"bubblewrap cannot run here: {cause}; install bubblewrap (Debian: apt-get install "
        "bubblewrap) where it may create namespaces, or set sandbox: auto or none"
    )


def uses_bwrap(mode: str | None) -> bool:
    """Whether a command under `mode` runs in bubblewrap (None means `auto`).

    `bwrap` where bubblewrap cannot run raises SandboxError; `auto` then runs without it and
    says so once per process, on stderr. Inside a process-isolated grader's sandbox, commands
    run directly there (that sandbox is bubblewrap's; it cannot nest).
    """
    if mode == "none":
        return False
    cause = problem()
    if cause is None:
        return True
    if cause == NESTED:  # inside a process-isolated grader's sandbox: that one applies
        return False
    message = requested_problem(mode)
    if message is not None:
        raise SandboxError(message)
    _warn_once(cause)
    return False


def _warn_once(cause: str) -> None:
    global _warned  # noqa: PLW0603 - once per process, by contract
    with _warn_lock:
        if _warned:
            return
        _warned = True
    print(
        f"gradekit: warning: agent code runs without a sandbox (sandbox: auto): {cause}; "
        "install bubblewrap, or set sandbox: none to run without one knowingly",
        file=sys.stderr,
        flush=True,
    )


def jail(
    *,
    readonly: Iterable[str] = (),
    writable: Iterable[str] = (),
    network: bool,
    cwd: str | None = None,
    hidden: Iterable[str] = (),
    bwrap: str | None = None,
) -> list[str]:
    """The `bwrap ... --` prefix of a command (see the module's docstring for the layout).

    `readonly` and `writable` folders (or files) appear at their own paths, those that do not
    exist are left out; `hidden` paths inside them are replaced by empty ones. `cwd` is the
    command's working folder.
    """
    argv = [bwrap or _probe()[0] or "bwrap"]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += _system()
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    if network:
        argv += _resolver()
    for path in _bindable(readonly):
        argv += ["--ro-bind", path, path]
    for path in _bindable(writable, writable=True):
        argv += ["--bind", path, path]
    for path in hidden:
        argv += _hide(path)
    if cwd is not None:
        argv += ["--chdir", cwd]
    argv.append("--")
    return argv


@functools.cache
def _system() -> tuple[str, ...]:
    """Read-only binds of the system folders (symlinks as symlinks), /etc's secrets hidden."""
    argv: list[str] = []
    for name in SYSTEM_FOLDERS:
        path = "/" + name
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for secret in _etc_secrets():
        argv += _hide(secret)
    return tuple(argv)


def _hide(path: str) -> list[str]:
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", path, "--remount-ro", path]
    if os.path.lexists(path):
        return ["--ro-bind", os.devnull, path]
    return []


@functools.cache
def _etc_secrets() -> tuple[str, ...]:
    """Files and folders of /etc that other users may not read, and the password files."""
    found = [path for path in ALWAYS_HIDDEN if os.path.lexists(path)]
    for folder, dirs, files in os.walk("/etc"):
        kept = []
        for name in dirs:
            path = os.path.join(folder, name)
            mode = _mode(path)
            if mode is None or stat.S_ISLNK(mode):
                continue
            if mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
                found.append(path)
            else:
                kept.append(name)
        dirs[:] = kept
        for name in files:
            path = os.path.join(folder, name)
            mode = _mode(path)
            if mode is not None and not stat.S_ISLNK(mode) and not mode & stat.S_IROTH:
                found.append(path)
    return tuple(sorted(set(found)))


def _mode(path: str) -> int | None:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return None


def _resolver() -> list[str]:
    """With the network shared, /etc/resolv.conf may point into /run: bind its target."""
    target = os.path.realpath("/etc/resolv.conf")
    if target.startswith("/etc/") or not os.path.isfile(target):
        return []
    return ["--ro-bind", target, target]


@functools.cache
def homes() -> frozenset[str]:
    """Every home folder on this machine: the user's, root's and each one in /home."""
    found = {os.path.realpath(os.path.expanduser("~")), "/root"}
    with contextlib.suppress(ImportError, KeyError):
        import pwd

        found.add(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    with contextlib.suppress(OSError):
        found.update(entry.path for entry in os.scandir("/home") if entry.is_dir())
    return frozenset(found)


def _bindable(paths: Iterable[str], *, writable: bool = False) -> list[str]:
    """Existing absolute real paths, deduplicated, parents first. Read-only ones leave out
    what the system folders hold already, home folders and folders holding one; writable ones
    are what the caller chose, all kept."""
    chosen: set[str] = set()
    for raw in paths:
        if not raw or not os.path.isabs(raw):
            continue
        path = os.path.realpath(raw)
        if not os.path.exists(path):
            continue
        if not writable and (
            _system_covers(path) or any(home == path or _inside(home, path) for home in homes())
        ):
            continue
        chosen.add(path)
    return sorted(chosen, key=lambda p: (p.count("/"), p))


def _system_covers(path: str) -> bool:
    top = path.split("/")[1]
    return top in SYSTEM_FOLDERS and not os.path.islink("/" + top)


def _inside(path: str, folder: str) -> bool:
    return folder == "/" or path.startswith(folder.rstrip("/") + "/")


def command_folders(command: str, path_env: str, extra: Sequence[str] = ()) -> list[str]:
    """The folders a command needs to be found and run, read-only.

    Every folder on PATH (a `shims` folder brings its parent: pyenv, rbenv), the Python running
    gradekit, the command's real folder, and that folder's parent when it is named `bin` (a
    toolchain such as `~/.nvm/versions/node/v20`), unless that parent sits right in a home.
    """
    folders = [*path_env.split(os.pathsep), *extra]
    folders += [entry[: -len("/shims")] for entry in folders if entry.endswith("/shims")]
    folders += [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    real = os.path.dirname(os.path.realpath(command))
    folders.append(real)
    parent = os.path.dirname(real)
    if os.path.basename(real) == "bin" and os.path.dirname(parent) not in homes():
        folders.append(parent)
    return folders
