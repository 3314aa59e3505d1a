"""What a whole run shares between its judge calls: the settings the command line (or the
caller) chose, the limit on calls in flight, and the statistics of the calls made.

The runner knows nothing of judges: `gradekit run` calls `configure` before the run and reads
`statistics` after it. Settings and statistics are process-wide (the runner grades on an event
loop in a thread of its own, where a context variable set by the caller would not be seen);
the semaphore that limits calls in flight is per event loop, because asyncio primitives belong
to the loop they were first used on.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from pathlib import Path
from typing import Any, Final

import attrs

__all__ = [
    "DEFAULT_CONCURRENCY",
    "JudgeSettings",
    "JudgeStatistics",
    "configure",
    "count",
    "current_settings",
    "slots",
    "statistics",
]

DEFAULT_CONCURRENCY: Final = 8
"""Judge calls in flight at once, over the whole run, unless `--judge-concurrency` says."""


@attrs.frozen
class JudgeSettings:
    """The run's judge settings.

    `concurrency`: judge requests in flight at once (per event loop, that is per run).
    `cache`: whether replies are cached on disk. `cache_dir`: where; None puts the cache in
    `.gradekit-cache/` beside the suite file (and nowhere for a grader made outside a suite).
    """

    concurrency: int = DEFAULT_CONCURRENCY
    cache: bool = True
    cache_dir: Path | None = None


@attrs.frozen
class JudgeStatistics:
    """What the run's judge calls cost.

    `calls`: judge calls sent to a server (each counted once, however many attempts it took);
    `cached`: calls answered from the cache instead; `retries`: extra attempts after a 429, a
    5xx, a timeout or a lost connection; `errors`: calls that gave no usable judgement;
    `input_tokens` / `output_tokens`: as the servers reported them (cached calls cost none).
    """

    calls: int = 0
    cached: int = 0
    retries: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        """The `summary.judge` object of the JSON report."""
        return attrs.asdict(self)

    def describe(self) -> str:
        """One line for the end of `gradekit run`."""
        calls = "call" if self.calls == 1 else "calls"
        return (
            f"judge: {self.calls} {calls} made, {self.cached} from cache, {self.retries} "
            f"retried, {self.errors} failed; {self.input_tokens:,} tokens in, "
            f"{self.output_tokens:,} out"
        )


_lock = threading.Lock()
_current: list[JudgeSettings] = [JudgeSettings()]  # one item, replaced by `configure`
_totals: dict[str, int] = dict.fromkeys(attrs.fields_dict(JudgeStatistics), 0)
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def configure(
    *,
    concurrency: int | None = None,
    cache: bool = True,
    cache_dir: str | Path | None = None,
) -> None:
    """Set the judge settings of the next run and start its statistics from zero.

    Call it before the run: a run already grading keeps the limit it started with.
    """
    if concurrency is not None and (
        isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
    ):
        raise ValueError(f"concurrency must be a whole number >= 1, got {concurrency!r}")
    with _lock:
        _current[0] = JudgeSettings(
            concurrency=DEFAULT_CONCURRENCY if concurrency is None else concurrency,
            cache=cache,
            cache_dir=None if cache_dir is None else Path(cache_dir).resolve(),
        )
        _slots.clear()
        for key in _totals:
            _totals[key] = 0


def current_settings() -> JudgeSettings:
    """The settings `configure` set last (the defaults before any call)."""
    return _current[0]


def count(**amounts: int) -> None:
    """Add to the run's statistics: `count(calls=1, input_tokens=120)`."""
    with _lock:
        for key, amount in amounts.items():
            _totals[key] += amount


def statistics() -> JudgeStatistics | None:
    """The statistics since the last `configure`, or None when no judge call was made or
    answered from the cache (no prompt grader ran)."""
    with _lock:
        totals: dict[str, Any] = dict(_totals)
    stats = JudgeStatistics(**totals)
    return None if stats.calls + stats.cached == 0 else stats


def slots() -> asyncio.Semaphore:
    """The semaphore bounding judge requests in flight on the running event loop."""
    loop = asyncio.get_running_loop()
    with _lock:
        semaphore = _slots.get(loop)
        if semaphore is None:
            semaphore = _slots[loop] = asyncio.Semaphore(_current[0].concurrency)
        return semaphore
