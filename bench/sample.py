"""Building one `Sample` (attrs' own constructor, each field's converter) against a floor.

Times, alternating in every round, three ways of making the same single-turn sample (a text
input, a text output, a number expected, one tool call):

- `Sample(...)`: what a user writes; every field frozen and converted;
- `Sample(..., dict call)`: the same with the tool call given as the dict a trace holds
  (`{"name": ..., "arguments": {...}}`), which becomes a `ToolCall`;
- `Sample(positional, frozen)`: every field given positionally, frozen already (as the suite
  loader has them: the converters keep them);
- `tuple10(...)`: a plain function returning its ten arguments as a tuple, the floor of any
  ten-field constructor on this machine at this moment (the machine is shared: the ratio to
  it is steadier than the microseconds).

Prints the median µs of each and each one's median ratio to `tuple10` over the rounds.

    .venv/bin/python bench/sample.py [--rounds 7] [--number 200000]
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from typing import Any

from gradekit import Sample, ToolCall
from gradekit.core.types import EMPTY

CALLS = (ToolCall("search", {"q": "7 + 0"}),)
CALL_DICTS = [{"name": "search", "arguments": {"q": "7 + 0"}}]


def tuple10(*fields: Any) -> tuple[Any, ...]:
    """The floor: ten arguments in, one object out."""
    return fields


SIDES = {
    "Sample(...)": lambda: Sample(
        case="case-0000007", input="What is 7 + 0?", output="7", expected=7, tool_calls=CALLS
    ),
    "Sample(..., dict call)": lambda: Sample(
        case="case-0000007", input="What is 7 + 0?", output="7", expected=7, tool_calls=CALL_DICTS
    ),
    "Sample(positional, frozen)": lambda: Sample(
        "case-0000007", 0, "What is 7 + 0?", "7", 7, CALLS, None, (), None, EMPTY
    ),
    "tuple10(...)": lambda: tuple10(
        "case-0000007", 0, "What is 7 + 0?", "7", 7, CALLS, None, (), None, EMPTY
    ),
}


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=200_000)
    args = parser.parse_args()
    made = SIDES["Sample(...)"]()
    assert made == SIDES["Sample(positional, frozen)"]() == SIDES["Sample(..., dict call)"]()
    times: dict[str, list[float]] = {label: [] for label in SIDES}
    for round_ in range(args.rounds):
        order = list(SIDES.items())
        for label, make in order if round_ % 2 == 0 else reversed(order):
            times[label].append(timeit.timeit(make, number=args.number) / args.number * 1e6)
    floor = times["tuple10(...)"]
    for label, values in times.items():
        ratio = statistics.median(v / f for v, f in zip(values, floor, strict=True))
        print(f"{label:24} {statistics.median(values):6.2f} µs  {ratio:5.2f}x tuple10")


if __name__ == "__main__":
    main()
