"""Which sandbox agent code gets (`sandbox: auto | bwrap | none`), and whether bubblewrap can
run here at all.

`problem()` probes once per process, by running `true` in a sandbox with every feature
gradekit uses (`gradekit.process.bubblewrap` builds it), and says why not when it cannot.
`uses_bwrap(mode)` decides for one grade: `none` never, `bwrap` always (an error where it
cannot run), `auto` where it can, else without, saying so once per process on stderr.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
from contextvars import ContextVar
from typing import Final, Literal

from gradekit._errors import SandboxError

__all__ = [
    "INSIDE",
    "MODES",
    "NESTED",
    "Mode",
    "bwrap_executable",
    "check_mode",
    "problem",
    "refuse_nested_command",
    "requested_problem",
    "uses_bwrap",
]

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
    from gradekit.process.bubblewrap import jail

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


_RUN_DEFAULT: ContextVar[str | None] = ContextVar("gradekit_sandbox_default", default=None)


def run_default() -> str:
    """The sandbox mode of the run in progress, for commands whose grader sets none (`auto`
    outside a run, or when the run sets none)."""
    return _RUN_DEFAULT.get() or "auto"


def set_run_default(mode: str | None) -> None:
    """Make `mode` the run's default in this thread's context (the runner's event loop)."""
    _RUN_DEFAULT.set(mode)
