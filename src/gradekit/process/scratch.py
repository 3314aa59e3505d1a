"""The scratch root of one command: a copy of the workspace, a fresh home and temp folder, and
the scrubbed environment the command gets; all removed when the grade ends."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from gradekit._scratch import remove_tree, scratch_prefix
from gradekit.process import spare_roots
from gradekit.process.remover import remove_later
from gradekit.process.workspace_copy import (
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_SIZE,
    copy_workspace,
)

__all__ = ["PASSED_THROUGH", "Sandbox"]

PASSED_THROUGH: Final = ("PATH", "LANG")
"""The only variables of gradekit's environment a command inherits (besides what it declares)."""


class Sandbox:
    """A scratch root for one grade: `cwd` (the workspace copy, or the workspace itself),
    a fresh `home` and `tmp`. Use it as a context manager; everything is removed on exit (at
    once, or with `defer` by the remover thread, before gradekit exits). With `reuse` and no
    workspace, the root may be a spare one, its folders as empty as new, and it is kept for
    the next grade when the command left it so (`spare_roots`)."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        *,
        copy: bool = True,
        defer: bool = False,
        reuse: bool = False,
        max_size: int = DEFAULT_MAX_SIZE,
        max_files: int = DEFAULT_MAX_FILES,
    ) -> None:
        self.defer = defer  # removed on the remover thread (see `remover`), not at once
        # With `reuse` and no workspace: a spare root left as it was made (see `spare_roots`).
        self._made: spare_roots.Made | None = None
        spare = spare_roots.take() if reuse and workspace is None else None
        if spare is not None:
            self.root = spare.root
        else:
            self.root = Path(tempfile.mkdtemp(prefix=scratch_prefix("sandbox")))
        self.home = self.root / spare_roots.HOME
        self.tmp = self.root / spare_roots.TMP
        if spare is not None:
            self.cwd = self.root / spare_roots.WORK
            self._made = spare
            return
        self.home.mkdir()
        self.tmp.mkdir()
        try:
            if workspace is None:
                self.cwd = self.root / spare_roots.WORK
                self.cwd.mkdir()
                if reuse:
                    self._made = spare_roots.made(self.root)
            elif copy:
                self.cwd = self.root / spare_roots.WORK
                copy_workspace(workspace, self.cwd, max_size=max_size, max_files=max_files)
            else:
                self.cwd = Path(workspace).resolve()
        except BaseException:
            self.close()
            raise

    def env(self, declared: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The scrubbed environment: PATH and LANG from the parent, HOME and TMPDIR in the
        sandbox, then `declared` (a None value passes that variable through from the parent)."""
        env = {key: os.environ[key] for key in PASSED_THROUGH if key in os.environ}
        env.setdefault("PATH", os.defpath)
        env["HOME"] = str(self.home)
        env["TMPDIR"] = str(self.tmp)
        for key, value in (declared or {}).items():
            if value is None:
                if key in os.environ:
                    env[key] = os.environ[key]
            else:
                env[key] = value
        return env

    def close(self) -> None:
        """Remove the scratch root, including read-only files a tool left behind (with
        `defer`, soon, on the remover thread: a grade need not wait for it); with `reuse`, a
        root left as it was made is kept for the next grade instead."""
        if self._made is not None and spare_roots.give_back(self._made):
            return
        if self.defer:
            remove_later(self.root)
        else:
            remove_tree(self.root)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
