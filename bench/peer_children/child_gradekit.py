"""gradekit's graders on the peer samples, called directly (run with gradekit's interpreter).

A fresh process per round, as each peer's child is: a process's own conditions (where its
objects landed in memory, its hash seed) move a per-call figure by tens of percent, so the
sides are compared over as many processes each, not one process of ours against a new process
of theirs every round.
"""

from __future__ import annotations

from typing import Any

from _common import Check, main
from peer_data import CONTAINS, REGEX, TOOL

import gradekit
from gradekit import Sample

OPTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "equality": ("equality", {}),
    "numeric": ("numeric", {}),
    "contains": ("contains", {"values": [CONTAINS]}),
    "regex": ("regex", {"pattern": REGEX}),
    "behavior": ("behavior", {"required_tools": [TOOL]}),
}
"""Each check's kind and options."""


def _builder(check: str) -> Any:
    kind, config = OPTIONS[check]

    def build(samples: list[dict[str, Any]]) -> Check:
        grader = gradekit.create(kind, config=config)
        arguments = [
            (Sample(output=s["output"], expected=s["expected"], tool_calls=s.get("tool_calls")),)
            for s in samples
        ]
        return Check(grader.grade, arguments, lambda result: result.passed, "grader.grade(sample)")

    return build


if __name__ == "__main__":
    main({check: _builder(check) for check in OPTIONS})
