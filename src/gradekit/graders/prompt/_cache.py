"""Judge replies on disk, so that grading unchanged outputs again makes no judge call.

One file per reply, named by the SHA-256 of everything the reply depends on (provider, server,
model, the whole prompt, the parameters, the sample number; never the API key). A file is
written to a temporary name in its folder and renamed over its final name, so readers (this
run or another one running at the same time) see a whole file or none; two runs writing the
same reply write the same bytes. Only replies that gave a judgement are stored: errors are
tried again next time. A file that cannot be read back is a miss, not an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from gradekit.graders.prompt.providers import Reply

__all__ = ["FORMAT", "ReplyCache", "cache_key"]

FORMAT: Final = 1
"""The version of the files' layout; files of another version are misses."""


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
