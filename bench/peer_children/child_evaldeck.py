"""evaldeck's code graders on the peer samples (run in evaldeck's own virtual environment)."""

from __future__ import annotations

from typing import Any

from _common import Check, main
from evaldeck.graders.code import ContainsGrader, EqualsGrader, RegexGrader, ToolCalledGrader
from evaldeck.test_case import EvalCase, ExpectedBehavior, Turn
from evaldeck.trace import Step, Trace


def _passed(result: Any) -> bool:
    return bool(result.passed)


def _pairs(samples: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(trace, test case) per sample, built before timing, as gradekit's samples are."""
    pairs = []
    for sample in samples:
        trace = Trace(input="task", output=sample["output"])
        for call in sample.get("tool_calls") or ():
            trace.add_step(Step.tool_call(tool_name=call["name"], tool_args=call["arguments"]))
        pairs.append((trace, EvalCase(name="case", turns=[Turn(user="task")])))
    return pairs


def _check(grader: Any, samples: list[dict[str, Any]], what: str) -> Check:
    return Check(grader.grade, _pairs(samples), _passed, what)


def equality(samples: list[dict[str, Any]]) -> Check:
    # The expected text per case, as an evaldeck suite gives it: the first turn's expectation.
    arguments = []
    for (trace, _), sample in zip(_pairs(samples), samples, strict=True):
        expected = ExpectedBehavior(output_equals=sample["expected"])
        case = EvalCase(name="case", turns=[Turn(user="task", expected=expected)])
        arguments.append((trace, case))
    return Check(
        EqualsGrader(normalize_whitespace=False).grade,
        arguments,
        _passed,
        "EqualsGrader(normalize_whitespace=False).grade(trace, case), case's output_equals",
    )


if __name__ == "__main__":
    from peer_data import CONTAINS, REGEX, TOOL

    main(
        {
            "equality": equality,
            "numeric": lambda _: "no numeric grader",
            "contains": lambda s: _check(
                ContainsGrader(values=[CONTAINS], case_sensitive=True),
                s,
                "ContainsGrader(values=[...], case_sensitive=True).grade(trace, case)",
            ),
            "regex": lambda s: _check(
                RegexGrader(pattern=REGEX), s, "RegexGrader(pattern=...).grade(trace, case)"
            ),
            "behavior": lambda s: _check(
                ToolCalledGrader(required=[TOOL]),
                s,
                "ToolCalledGrader(required=[...]).grade(trace, case)",
            ),
        }
    )
