"""autoevals' checks on the peer samples (run in autoevals' own virtual environment)."""

from __future__ import annotations

from typing import Any

from _common import Check, main
from autoevals import ExactMatch, NumericDiff


def equality(samples: list[dict[str, Any]]) -> Check:
    scorer = ExactMatch()
    return Check(
        scorer.eval,
        [(s["output"], s["expected"]) for s in samples],
        lambda score: score.score == 1,
        "ExactMatch().eval(output, expected)",
    )


def numeric(samples: list[dict[str, Any]]) -> Check:
    scorer = NumericDiff()

    def call(output: str, expected: str) -> Any:
        # NumericDiff takes numbers: reading them from the texts is part of the check.
        return scorer.eval(float(output), float(expected))

    return Check(
        call,
        [(s["output"], s["expected"]) for s in samples],
        lambda score: score.score == 1,
        "NumericDiff().eval(float(output), float(expected))",
    )


if __name__ == "__main__":
    main(
        {
            "equality": equality,
            "numeric": numeric,
            "contains": lambda _: "no substring scorer (ListContains compares lists of strings)",
            "regex": lambda _: "no regex scorer",
            "behavior": lambda _: "no tool-call scorer",
        }
    )
