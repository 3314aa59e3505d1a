"""What one run's judge calls share, kept in the run's context (`gradekit.core.context`):
the limit on requests in flight, the statistics of the calls made, the structured-output
memo, and the cache of replies on disk.

The runner knows nothing of judges: it makes a run context per run, current in every thread
and event loop it grades in; `judge_run()` finds (or makes) the judge's state in it. The limit
is one for the whole run whatever the threads and loops (a lock and a queue of waiters, each
woken on its own loop), so `--judge-concurrency N` means N requests in flight at most.

The cache: one file per reply, named by the SHA-256 of everything the reply depends on
(provider, server, model, the whole prompt, the parameters, the sample number; never the API
key). A file is written to a temporary name in its folder and renamed over its final name, so
readers (this run or another one running at the same time) see a whole file or none; two runs
writing the same reply write the same bytes. Only replies that gave a judgement are stored:
errors are tried again next time. A file that cannot be read back is a miss, not an error.

Imports the core and `providers` (the reply's form).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit.core.context import RunOptions, current_run
from gradekit.graders.prompt.providers import Reply

__all__ = [
    "CACHE_FOLDER",
    "FORMAT",
    "JudgeRun",
    "JudgeStatistics",
    "Limit",
    "ReplyCache",
    "cache_key",
    "judge_run",
]

CACHE_FOLDER: Final = ".gradekit-cache"
"""The cache's folder beside the suite file, unless `--cache-dir` names another."""

FORMAT: Final = 1
"""The version of the cache files' layout; files of another version are misses."""


@attrs.frozen
class JudgeStatistics:
    """What a run's judge calls cost.

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


class Limit:
    """At most `size` holders at once, over every thread and event loop: `acquire` waits
    without blocking its loop (a waiter is a future on its own loop, woken from whichever
    thread releases), and waiters are served in order of arrival."""

    def __init__(self, size: int) -> None:
        self.size: Final = size
        self._free = size
        self._lock = threading.Lock()
        self._waiters: collections.deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = (
            collections.deque()
        )

    async def acquire(self, seconds: float) -> bool:
        """Take a slot within `seconds`; False when none came free. Never leaks a slot, even
        when cancelled at the moment the slot was granted."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return True
            waiting: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, waiting))
        try:
            done, _ = await asyncio.wait((waiting,), timeout=seconds)
        except BaseException:
            self._give_up(loop, waiting)
            raise
        if done:
            return True
        self._give_up(loop, waiting)
        return False

    def release(self) -> None:
        """Give a slot back: to the first waiter, on its own loop, else to the free ones."""
        with self._lock:
            while self._waiters:
                loop, waiting = self._waiters.popleft()
                try:
                    loop.call_soon_threadsafe(self._grant, waiting)
                    return
                except RuntimeError:  # its loop is closed: the next waiter
                    continue
            self._free += 1

    def _grant(self, waiting: asyncio.Future[None]) -> None:
        """On the waiter's loop: the slot is its, unless it stopped waiting meanwhile."""
        if waiting.done():
            self.release()
        else:
            waiting.set_result(None)

    def _give_up(self, loop: asyncio.AbstractEventLoop, waiting: asyncio.Future[None]) -> None:
        """On the waiter's loop, when it stops waiting: a slot granted already goes back; a
        grant on its way finds the future cancelled and passes the slot on."""
        if waiting.done() and not waiting.cancelled():
            self.release()
            return
        waiting.cancel()
        with self._lock, contextlib.suppress(ValueError):
            self._waiters.remove((loop, waiting))


class JudgeRun:
    """The judge's state in one run: its options, the `limit` on requests in flight, the
    statistics, and the (url, model) pairs whose server refused structured output (later
    calls skip straight to plain text)."""

    def __init__(self, options: RunOptions) -> None:
        self.options: Final = options
        self.limit: Final = Limit(options.judge_concurrency)
        self.plain_only: Final[set[tuple[str, str]]] = set()
        self._lock = threading.Lock()
        self._totals: dict[str, int] = dict.fromkeys(attrs.fields_dict(JudgeStatistics), 0)

    def count(self, **amounts: int) -> None:
        """Add to the run's statistics: `count(calls=1, input_tokens=120)`."""
        with self._lock:
            for key, amount in amounts.items():
                self._totals[key] += amount

    def statistics(self) -> JudgeStatistics | None:
        """The statistics so far, or None when no judge call was made or answered from the
        cache (no prompt grader ran)."""
        with self._lock:
            totals: dict[str, Any] = dict(self._totals)
        stats = JudgeStatistics(**totals)
        return None if stats.calls + stats.cached == 0 else stats

    def figures(self) -> dict[str, int] | None:
        """The `summary.judge` object of the run's report (see `RunContext.figures`)."""
        stats = self.statistics()
        return None if stats is None else stats.to_dict()

    def remember_plain(self, url: str, model: str) -> None:
        """The server at `url` refused structured output for `model`."""
        with self._lock:
            self.plain_only.add((url, model))

    def cache(self, suite_dir: Path | None) -> ReplyCache | None:
        """Where the replies of a grader made beside `suite_dir` are cached (None: nowhere)."""
        if not self.options.judge_cache:
            return None
        if self.options.judge_cache_dir is not None:
            return ReplyCache(self.options.judge_cache_dir)
        return None if suite_dir is None else ReplyCache(suite_dir / CACHE_FOLDER)


def judge_run() -> JudgeRun:
    """The judge's state in the run in effect (see `gradekit.core.context.current_run`)."""
    return current_run().state("judge", JudgeRun)


def cache_key(material: Mapping[str, Any]) -> str:
    """The hex SHA-256 naming the reply to `material` (JSON-able, see JudgeRequest)."""
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ReplyCache:
    """The replies under `root` (created on the first write, with a `.gitignore`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Reply | None:
        """The stored reply for `key`, or None."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or data.get("key") != key:
                return None
            return Reply.from_json(data["reply"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, reply: Reply, *, provider: str, model: str) -> None:
        """Store `reply` for `key`. A cache that cannot be written is skipped: grading does
        not depend on it."""
        data = {
            "format": FORMAT,
            "key": key,
            "provider": provider,
            "model": model,
            "reply": reply.to_json(),
        }
        path = self._path(key)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._ignore()
            _write_atomically(path, json.dumps(data, ensure_ascii=False))

    def _ignore(self) -> None:
        """Keep the cache out of version control, as build folders are."""
        marker = self.root / ".gitignore"
        if not marker.exists():
            _write_atomically(marker, "# written by gradekit: judge replies, safe to delete\n*\n")


def _write_atomically(path: Path, text: str) -> None:
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise
