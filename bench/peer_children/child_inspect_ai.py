"""inspect_ai's scorers on the peer samples (run in inspect_ai's own virtual environment).

A scorer is an `async def score(state, target)`. These scorers await nothing, so each call
drives the scorer's coroutine to its end with one `send(None)` instead of an event loop: the
scorer's whole code runs, and no event-loop scheduling is counted against it. The TaskState
and Target of each sample are built before timing, as gradekit's samples are.
"""

from __future__ import annotations

from typing import Any

from _common import Check, main
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import CORRECT, Target, includes, match, pattern
from inspect_ai.solver import TaskState


def _drive(scorer: Any) -> Any:
    def call(state: Any, target: Any) -> Any:
        coroutine = scorer(state, target)
        try:
            coroutine.send(None)
        except StopIteration as done:
            return done.value
        raise RuntimeError("the scorer awaited something: it cannot be driven without a loop")

    return call


def _pairs(samples: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    pairs = []
    for number, sample in enumerate(samples):
        state = TaskState(
            model="none/none",
            sample_id=number,
            epoch=1,
            input="task",
            messages=[],
            output=ModelOutput.from_content("none/none", sample["output"]),
        )
        pairs.append((state, Target(sample["expected"])))
    return pairs


def _check(scorer: Any, samples: list[dict[str, Any]], what: str) -> Check:
    return Check(_drive(scorer), _pairs(samples), lambda score: score.value == CORRECT, what)


if __name__ == "__main__":
    from peer_data import REGEX

    main(
        {
            "equality": lambda s: _check(
                match(location="exact", ignore_case=False),
                s,
                "match(location='exact', ignore_case=False) (strips whitespace, punctuation)",
            ),
            "numeric": lambda s: _check(
                match(location="exact", numeric=True), s, "match(location='exact', numeric=True)"
            ),
            "contains": lambda s: _check(
                includes(ignore_case=False), s, "includes(ignore_case=False), target = the value"
            ),
            "regex": lambda s: _check(
                pattern(REGEX, ignore_case=False),
                s,
                "pattern(REGEX, ignore_case=False): a search, then the group against the target",
            ),
            "behavior": lambda _: "no tool-call scorer",
        }
    )
