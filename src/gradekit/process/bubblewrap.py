"""Bubblewrap: the layout of the sandbox agent-written code runs in, and which sandbox mode
applies (`sandbox: auto | bwrap | none`).

`jail(bwrap, ...)` opens the `bwrap` argv prefix of one command, with the descriptor its
seccomp filter is read from (`gradekit.process.seccomp` builds it). What the command then
sees (the promise stated in docs/agent-graders.md, section "The sandbox (bubblewrap)"):

- new mount, PID, IPC and UTS namespaces, and a new network namespace unless the network is
  shared; `--die-with-parent`, `--new-session`, every capability dropped; the system calls of
  `gradekit.process.seccomp` refused;
- a root of its own (a fresh tmpfs) holding only: the system folders (`/usr`, `/bin`, `/sbin`,
  `/lib*`, `/opt`, `/etc`) read-only, where every file and folder of `/etc` that other users
  may not read (`/etc/shadow`, `/etc/gshadow`, `/etc/ssl/private`...) is replaced: a file by
  /dev/null on a nodev mount (it cannot be opened), a folder by an empty read-only one; a
  fresh `/dev`, the `/proc` of its own PID namespace with the kernel's interfaces in it
  read-only (`/proc/sys`, `/proc/sysrq-trigger`, ...) or hidden (`/proc/kcore`, `/proc/keys`,
  ...), and no `/sys`: as root, /proc/sys is otherwise writable without any capability
  (`kernel.core_pattern` runs a program as the host's root); an empty `/tmp` and `/var/tmp`;
- the folders the caller lists, read-only or writable, at their own paths (the deeper of two
  nested ones decides what is under it). A read-only folder that is a home folder, `/` or
  `/home` is left out.

Which mode applies: `problem()` probes once per process, by running `true` in a sandbox with
every feature gradekit uses, and says why not when it cannot. `uses_bwrap(mode)` decides for
one command or worker: `none` never, `bwrap` always (an error where it cannot run), `auto`
where it can, else without, saying so once per process on stderr. `run_default()` is the mode
of the run in progress (`gradekit.core.context.run_sandbox`, which the runner sets).

Imports: the core (`gradekit.core.errors`) and `gradekit.process.seccomp`.
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
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, Literal

import attrs

from gradekit.core.context import run_sandbox
from gradekit.core.errors import SandboxError
from gradekit.process import seccomp

__all__ = [
    "ALWAYS_HIDDEN",
    "INSIDE",
    "KERNEL_HIDDEN",
    "KERNEL_READONLY",
    "MODES",
    "NESTED",
    "NO_MOUNTS",
    "SYSTEM_FOLDERS",
    "Jail",
    "Mode",
    "Mounts",
    "bwrap_executable",
    "check_mode",
    "command_folders",
    "homes",
    "jail",
    "problem",
    "refuse_nested_command",
    "requested_problem",
    "run_default",
    "uses_bwrap",
]


SYSTEM_FOLDERS: Final = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt", "etc")
ALWAYS_HIDDEN: Final = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
KERNEL_READONLY: Final = (
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
    "/proc/acpi",
    "/proc/scsi",
    "/proc/asound",
)
"""The kernel's interfaces in /proc that the sandbox shows read-only (those that exist)."""
KERNEL_HIDDEN: Final = (
    "/proc/kcore",
    "/proc/keys",
    "/proc/key-users",
    "/proc/timer_list",
    "/proc/sched_debug",
    "/proc/latency_stats",
    "/proc/kallsyms",
)
"""Files of /proc that the sandbox replaces by /dev/null (those that exist)."""


@attrs.frozen
class Jail:
    """An open bubblewrap prefix: `argv` goes before the command, and `fds` must be passed
    to it (`subprocess.Popen(pass_fds=...)`): bubblewrap reads its seccomp filter there."""

    argv: tuple[str, ...]
    fds: tuple[int, ...]


@attrs.frozen
class Mounts:
    """Folders a toolchain needs in the sandbox besides the system and the workspace:
    `readonly` ones (a toolchain's own files), `writable` ones (its caches, shared between
    runs) and `hidden` files inside them (credentials)."""

    readonly: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()


NO_MOUNTS: Final = Mounts()


@contextlib.contextmanager
def jail(
    bwrap: str,
    *,
    readonly: Iterable[str] = (),
    writable: Iterable[str] = (),
    network: bool,
    cwd: str | None = None,
    hidden: Iterable[str] = (),
) -> Iterator[Jail]:
    """The `bwrap ... --` prefix of a command (see the module's docstring for the layout),
    open while the command is started: its seccomp filter waits in a pipe that closes on exit.

    `readonly` and `writable` folders (or files) appear at their own paths, those that do not
    exist are left out; `hidden` paths inside them are replaced as /etc's secrets are. `cwd`
    is the command's working folder. Raises SandboxError where the filter cannot be built.
    """
    filter_program = seccomp.program(network)
    read, write = os.pipe()
    try:
        # A few hundred bytes: the pipe holds them all, and bubblewrap reads to the end.
        os.write(write, filter_program)
        os.close(write)
        write = -1
        yield Jail(
            argv=tuple(_argv(bwrap, readonly, writable, network, cwd, hidden, read)), fds=(read,)
        )
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def _argv(  # noqa: PLR0917 - `jail`'s arguments, with the filter's descriptor
    bwrap: str,
    readonly: Iterable[str],
    writable: Iterable[str],
    network: bool,
    cwd: str | None,
    hidden: Iterable[str],
    filter_fd: int,
) -> list[str]:
    argv = [bwrap]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += ["--seccomp", str(filter_fd)]
    argv += _system()
    argv += ["--dev", "/dev", "--proc", "/proc", *_kernel()]
    argv += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    if network:
        argv += _resolver()
    for path, can_write in _binds(readonly, writable):
        argv += ["--bind" if can_write else "--ro-bind", path, path]
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


@functools.cache
def _kernel() -> tuple[str, ...]:
    """/proc's kernel interfaces read-only or hidden, after `--proc /proc`. Bubblewrap covers
    some itself, but leaves /proc/sys writable by root (its check of write access fails)."""
    argv: list[str] = []
    for path in KERNEL_READONLY:
        if os.path.lexists(path):
            argv += ["--ro-bind", path, path]
    for path in KERNEL_HIDDEN:
        if os.path.lexists(path):
            argv += ["--ro-bind", os.devnull, path]
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


def _binds(readonly: Iterable[str], writable: Iterable[str]) -> list[tuple[str, bool]]:
    """(real path, writable) of every existing absolute path, parents first, so that the
    deeper of two nested binds decides what is under it; a path listed both ways is writable.
    Read-only ones leave out what the system folders hold already, home folders and folders
    holding one; writable ones are what the caller chose, all kept."""
    chosen: dict[str, bool] = {}
    for raw in readonly:
        path = _real(raw)
        if path is None or _system_covers(path):
            continue
        if any(home == path or _inside(home, path) for home in homes()):
            continue
        chosen.setdefault(path, False)
    for raw in writable:
        path = _real(raw)
        if path is not None:
            chosen[path] = True
    return sorted(chosen.items(), key=lambda item: (item[0].count("/"), item[0]))


def _real(raw: str) -> str | None:
    if not raw or not os.path.isabs(raw):
        return None
    path = os.path.realpath(raw)
    return path if os.path.exists(path) else None


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


# -- which sandbox applies ---------------------------------------------------------------------

Mode = Literal["auto", "bwrap", "none"]
MODES: Final = ("auto", "bwrap", "none")

INSIDE: Final = "GRADEKIT_SANDBOXED"
"""Set (to 1) in the environment of a process-isolated grader's child in bubblewrap: a
sandbox cannot nest, and the child's own sandbox already holds what the grader runs."""
NESTED: Final = "this process runs in gradekit's sandbox already, which cannot nest"

_PROBE_SECONDS: Final = 10.0

_warned = False
_warn_lock = threading.Lock()


def check_mode(value: object) -> str | None:
    """None for a valid mode (or None); else what is wrong with `value`."""
    if value is None or value in MODES:
        return None
    return f"expected one of 'auto', 'bwrap', 'none', got {value!r}"


def bwrap_executable() -> str:
    """The bwrap that passed the probe (call `uses_bwrap` first)."""
    return _probe()[0] or "bwrap"


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
    try:
        with jail(bwrap, readonly=[os.path.dirname(true)], network=False) as box:
            probe = subprocess.run(
                [*box.argv, true],
                capture_output=True,
                text=True,
                timeout=_PROBE_SECONDS,
                stdin=subprocess.DEVNULL,
                pass_fds=box.fds,
            )
    except SandboxError as error:  # no seccomp filter can be built here
        return None, str(error)
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
    says so once per process, on stderr. Inside a process-isolated grader's sandbox it is
    False (bubblewrap cannot nest): a command there is refused by `refuse_nested_command`.
    """
    if mode == "none":
        return False
    cause = problem()
    if cause is None:
        return True
    if cause == NESTED:  # inside a process-isolated grader's sandbox: it cannot nest
        return False
    message = requested_problem(mode)
    if message is not None:
        raise SandboxError(message)
    _warn_once(cause)
    return False


def refuse_nested_command(mode: str | None) -> None:
    """Raise SandboxError for a command to run under `mode` (None: `auto`) inside a
    process-isolated grader's sandbox (a composite's child): that sandbox keeps gradekit's
    environment and shows the suite's files, and bubblewrap cannot nest. `sandbox: none`
    runs it there knowingly."""
    if mode != "none" and problem() == NESTED:
        raise SandboxError(
            "a command cannot run in its sandbox inside a process-isolated grader: that "
            "grader's sandbox keeps gradekit's environment and shows the suite's files, and "
            "bubblewrap cannot nest; give the entry holding this command isolation: thread "
            "(its command still runs in a sandbox of its own), or set sandbox: none on it"
        )


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


def run_default() -> str:
    """The sandbox mode of the run in progress, for commands whose grader sets none (`auto`
    outside a run, or when the run sets none: `gradekit.core.context.run_sandbox`)."""
    return run_sandbox() or "auto"
