"""Scratch roots made ahead, off the grade's path, by one background thread.

Making a scratch root (`mkdtemp` and its `home` and `tmp` folders) costs a few directory
creations a busy disk makes slow, on the path from one command to the next. So a small stock of
fresh roots (`STOCK`) is kept ready: `fresh_root` hands one out and wakes the stocker thread to
make another; with none ready it makes one at once. A root is handed out once, never back: each
grade gets a fresh, empty root, made by this process (mode 0700, its pid in the name) moments
before. What is still in stock is removed at interpreter exit; a process killed first leaves
its stock to the sweep of stale scratch items (`gradekit._scratch.sweep`), as it leaves the
roots of its grades. A forked child starts with an empty stock of its own (the parent's roots
are the parent's).
"""

from __future__ import annotations

import atexit
import os
import tempfile
import threading
from pathlib import Path
from typing import Final

from gradekit._scratch import remove_tree, scratch_prefix

__all__ = ["STOCK", "fresh_root", "make_root"]

STOCK: Final = 4
"""Roots kept ready: enough for a few grades ending at once; each costs three empty folders."""

_lock = threading.Lock()
_wake = threading.Event()
_ready: list[Path] = []
_thread: threading.Thread | None = None
_closed = False


def make_root() -> Path:
    """A new scratch root holding empty `home` and `tmp` folders."""
    root = Path(tempfile.mkdtemp(prefix=scratch_prefix("sandbox")))
    try:
        (root / "home").mkdir()
        (root / "tmp").mkdir()
    except BaseException:
        remove_tree(root)
        raise
    return root


def fresh_root() -> Path:
    """A fresh scratch root (see `make_root`) for one grade, never handed out before."""
    global _thread  # noqa: PLW0603 - one stocker per process, started on demand
    with _lock:
        root = _ready.pop() if _ready else None
        if _thread is None and not _closed:
            _thread = threading.Thread(target=_stock, name="gradekit-stocker", daemon=True)
            _thread.start()
    _wake.set()
    return root if root is not None else make_root()


def _stock() -> None:
    while True:
        _wake.wait()
        _wake.clear()
        while True:
            with _lock:
                if _closed or len(_ready) >= STOCK:
                    break
            try:
                root = make_root()
            except OSError:  # a full or read-only temp folder: grades make their own
                break
            with _lock:
                if _closed:
                    remove_tree(root)
                    return
                _ready.append(root)


@atexit.register
def _at_exit() -> None:
    global _closed  # noqa: PLW0603
    with _lock:
        _closed = True
        left = list(_ready)
        _ready.clear()
    for root in left:
        remove_tree(root)


def _forked() -> None:
    # The parent's stock and stocker are the parent's: this process starts with none.
    global _lock, _thread, _wake  # noqa: PLW0603
    _lock = threading.Lock()
    _wake = threading.Event()
    _ready.clear()
    _thread = None


os.register_at_fork(after_in_child=_forked)
