"""A grader for the warm-worker tests: what it does depends on the sample's output, and it
reports where it ran (pid) and what state it found. Importable by the workers (test path)."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

import attrs

from gradekit import GradeResult, Sample
from gradekit.registry.entries import GraderEntry

WORKER = uuid.uuid4().hex
"""Who this worker is: drawn when a fresh worker imports this module (a pid would not do: in
bubblewrap every worker is pid 2 of its own namespace)."""

GRADES = [0]
"""A module global the grader counts its grades in: not reset between grades (documented)."""


def entry(grader: Any, **keys: Any) -> GraderEntry:
    """A suite entry for `grader` with the given common keys."""
    return GraderEntry(grader=grader, kind=grader.kind, name=grader.name, **keys)


@attrs.frozen
class Where:
    """`ok`: pass; `hang`: sleep past any timeout; `crash`: SIGSEGV; `exit`: os._exit(3);
    `dirty`: change the working folder, the environment and sys.path, leave a temp file;
    `thread`: leave a thread running. Details: the pid and the state the grade found."""

    kind: ClassVar[str] = "where"
    name: str = "where"
    pids: str | None = None  # a file each grade appends its worker's WORKER to

    def grade(self, sample: Sample) -> GradeResult:
        import sys

        GRADES[0] += 1
        if self.pids is not None:
            with open(self.pids, "a") as file:
                file.write(f"{WORKER}\n")
        found: dict[str, Any] = {
            "output": sample.output,
            "pid": os.getpid(),
            "worker": WORKER,
            "cwd": os.getcwd(),
            "mark": os.environ.get("GRADEKIT_TEST_MARK"),
            "tmp": sorted(os.listdir(tempfile.gettempdir())),
            "path_mark": "/nowhere/mark" in sys.path,
            "grades": GRADES[0],
        }
        action = sample.output
        if action == "hang":
            time.sleep(3600)
        elif action == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif action == "exit":
            os._exit(3)
        elif action == "dirty":
            os.chdir("/")
            os.environ["GRADEKIT_TEST_MARK"] = "left"
            sys.path.append("/nowhere/mark")
            Path(tempfile.gettempdir(), "left.txt").write_text("left by a grade")
        elif action == "thread":
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
        return GradeResult(self.kind, self.name, True, 1.0, details=found)


@attrs.frozen
class Attack:
    """Reads `secret` (a host file outside the workspace) and writes `target` on the host."""

    kind: ClassVar[str] = "attack"
    name: str = "attack"
    secret: str = ""
    target: str = ""

    def grade(self, sample: Sample) -> GradeResult:
        details: dict[str, Any] = {"worker": WORKER}
        try:
            details["read"] = Path(self.secret).read_text()
        except OSError as error:
            details["read"] = f"refused: {type(error).__name__}"
        try:
            Path(f"{self.target}.{sample.output}").write_text("written by a grader")
            details["wrote"] = True
        except OSError as error:
            details["wrote"] = f"refused: {type(error).__name__}"
        return GradeResult(self.kind, self.name, True, 1.0, details=details)
