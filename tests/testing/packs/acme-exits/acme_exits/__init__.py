"""Grader kinds that end the process grading them: `os._exit(0)`, and SIGKILL to itself (what
no guard catches). `gradekit check-pack` must still check the kind after them, and fail.

Installed for real (pip install) by the kit's tests.
"""

from __future__ import annotations

import os
import signal
from typing import ClassVar

import attrs

from gradekit import GradeResult, Sample


@attrs.frozen
class Exits:
    """Ends its process with exit code 0 when it grades."""

    kind: ClassVar[str] = "acme.exits"
    examples: ClassVar[tuple[dict[str, str], ...]] = ({},)
    name: str = attrs.field(kw_only=True, default="acme.exits")

    def grade(self, sample: Sample) -> GradeResult:
        os._exit(0)


@attrs.frozen
class Killed:
    """Kills its own process when it grades."""

    kind: ClassVar[str] = "acme.killed"
    examples: ClassVar[tuple[dict[str, str], ...]] = ({},)
    name: str = attrs.field(kw_only=True, default="acme.killed")

    def grade(self, sample: Sample) -> GradeResult:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


@attrs.frozen
class Later:
    """Passes every output: checked after the kinds that end their process."""

    kind: ClassVar[str] = "acme.later"
    examples: ClassVar[tuple[dict[str, str], ...]] = ({},)
    name: str = attrs.field(kw_only=True, default="acme.later")

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "fine")
