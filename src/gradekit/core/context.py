"""The contexts a kind reads: what is being loaded right now, and the run in progress.

The load context: the suite loader sets the suite file's folder and the case and turn at hand
while it creates graders; the `code` kind reads them so that a `graders.py` beside the suite
file can be imported and its errors name the case and turn. A plain Python caller may set
them too.

The run context: `RunContext` holds what one run shares between its grades (its
`RunOptions`, and each kind's state for the run, such as the judge's limit on requests in
flight, its cache and its statistics); beside it, `run_sandbox()` is the sandbox mode the run
gives commands. The runner makes one per run and makes it current in every thread it grades
in; a kind reads it with `current_run()`. Nothing per run lives in a
module global, so two runs in one process share nothing. Imports attrs only.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs

__all__ = [
    "DEFAULT_JUDGE_CONCURRENCY",
    "RunContext",
    "RunOptions",
    "current_place",
    "current_run",
    "current_suite_dir",
    "place",
    "run_sandbox",
    "set_run",
    "set_run_sandbox",
    "suite_dir",
]

T = TypeVar("T")

_SUITE_DIR: ContextVar[Path | None] = ContextVar("gradekit_suite_dir", default=None)
_PLACE: ContextVar[str | None] = ContextVar("gradekit_place", default=None)


def current_suite_dir() -> Path | None:
    """The folder of the suite file being loaded, or None outside a load."""
    return _SUITE_DIR.get()


@contextlib.contextmanager
def suite_dir(path: Path | str | None) -> Iterator[None]:
    """Make `path` the current suite folder for the duration of the block."""
    token = _SUITE_DIR.set(None if path is None else Path(path).resolve())
    try:
        yield
    finally:
        _SUITE_DIR.reset(token)


def current_place() -> str | None:
    """Where in the suite the grader being created sits (`case 'growth', turn 1`), or None.

    Kinds whose errors come from user code (the `code` kind) name it in their messages, so the
    user sees which case's grader failed, not only its position in the file."""
    return _PLACE.get()


@contextlib.contextmanager
def place(case: str | None, turn: int | None = None) -> Iterator[None]:
    """Make `case` (and `turn`) the current place for the duration of the block."""
    text = None if case is None else f"case '{case}'" + ("" if turn is None else f", turn {turn}")
    token = _PLACE.set(text)
    try:
        yield
    finally:
        _PLACE.reset(token)


DEFAULT_JUDGE_CONCURRENCY: Final = 8
"""Judge requests in flight at once, over the whole run, unless `--judge-concurrency` says."""


def _concurrency(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be a whole number >= 1, got {value!r}")


def _folder(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value).resolve()


@attrs.frozen(kw_only=True)
class RunOptions:
    """What a run decides for the kinds whose grades share state over the run (the `prompt`
    kind's judge): `judge_concurrency` judge requests in flight at once over the whole run;
    `judge_cache` whether judge replies are cached on disk; `judge_cache_dir` where (None: in
    `.gradekit-cache/` beside the suite file, and nowhere for a grader made outside a suite).
    `gradekit run` sets them from `--judge-concurrency`, `--no-cache` and `--cache-dir`."""

    judge_concurrency: int = attrs.field(default=DEFAULT_JUDGE_CONCURRENCY, validator=_concurrency)
    judge_cache: bool = True
    judge_cache_dir: Path | None = attrs.field(default=None, converter=_folder)


class RunContext:
    """What one run shares between its grades: its `options`, and each kind's state for the
    run, made on first use by `state`.

    A context manager: `with RunContext(RunOptions(judge_concurrency=16)) as run:` makes it
    current in this thread (and in the threads and event loops gradekit starts from it) for
    the block: `gradekit.grade` calls in the block grade within it, and `run_suite` starts a
    run of its own with its options (the report's `summary.judge` holds that run's figures).
    """

    def __init__(self, options: RunOptions | None = None) -> None:
        self.options: Final = RunOptions() if options is None else options
        self._states: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._tokens = threading.local()

    def state(self, name: str, make: Callable[[RunOptions], T]) -> T:
        """The run's state called `name`, made by `make(options)` on its first use (once,
        whichever thread asks first)."""
        with self._lock:
            found = self._states.get(name)
            if found is None:
                found = self._states[name] = make(self.options)
            return found

    def figures(self) -> dict[str, Any]:
        """What each kind's state reports about the run (`{"judge": {...}}`), for the states
        with a `figures()` that is not None."""
        with self._lock:
            states = list(self._states.items())
        found = {}
        for name, state in states:
            figures = getattr(state, "figures", None)
            value = None if figures is None else figures()
            if value is not None:
                found[name] = value
        return found

    def __enter__(self) -> RunContext:
        stack: list[Token[RunContext | None]] | None = getattr(self._tokens, "stack", None)
        if stack is None:  # this thread's first entry
            stack = self._tokens.stack = []
        stack.append(_RUN.set(self))
        return self

    def __exit__(self, *exc_info: object) -> None:
        _RUN.reset(self._tokens.stack.pop())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its options: a process it is sent to starts its own state."""
        return (RunContext, (self.options,))


_RUN: ContextVar[RunContext | None] = ContextVar("gradekit_run_context", default=None)


@functools.cache
def _outside_runs() -> RunContext:
    """The context of grades made outside any run (`grader.grade(sample)` called directly)."""
    return RunContext()


def current_run() -> RunContext:
    """The run context in effect: the run in progress, one a caller entered, or (outside
    both) the one context of grades made outside any run."""
    run = _RUN.get()
    return run if run is not None else _outside_runs()


def set_run(run: RunContext) -> None:
    """Make `run` current in this thread's context for good (a thread the runner started
    for the run)."""
    _RUN.set(run)


_SANDBOX: ContextVar[str | None] = ContextVar("gradekit_sandbox_default", default=None)


def run_sandbox() -> str | None:
    """The sandbox mode the run in progress gives commands whose grader sets none (None when
    it sets none, and outside a run); `gradekit.process.bubblewrap.run_default` reads it."""
    return _SANDBOX.get()


def set_run_sandbox(mode: str | None) -> None:
    """Make `mode` the run's sandbox default in this thread's context (the runner's loop)."""
    _SANDBOX.set(mode)
