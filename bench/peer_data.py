"""The samples of the peer benchmarks, generated from a seed, as plain JSON-ready data.

Standard library only, so gradekit's side and every peer's child script read the very same
samples from one JSON file. Half of each check's samples pass and half fail.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
CONTAINS = "order"
"""The one value the contains checks look for."""
REGEX = r"order (\d+)"
"""The pattern the regex checks search for (one group: inspect_ai compares it to the target)."""
TOOL = "search"
"""The tool the behavior checks require."""
OTHER_TOOLS = ["read_file", "write_file", "run_tests", "list_dir"]
CHECKS = ("equality", "numeric", "contains", "regex", "behavior")


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def generate(seed: int, count: int) -> dict[str, list[dict[str, Any]]]:
    """For each check, `count` samples: `output`, `expected` and, for behavior, `tool_calls`."""
    rng = random.Random(seed)
    data: dict[str, list[dict[str, Any]]] = {check: [] for check in CHECKS}
    for index in range(count):
        passing = index % 2 == 0
        expected = _sentence(rng, 4)
        output = expected if passing else _sentence(rng, 4) + " x"
        data["equality"].append({"output": output, "expected": expected})

        value = rng.randint(0, 10**6) / 100
        data["numeric"].append(
            {"output": str(value if passing else value + 1), "expected": str(value)}
        )

        number = str(rng.randint(1000, 9999))
        text = _sentence(rng, 12)
        if passing:
            text += f" {CONTAINS} {number} {_sentence(rng, 3)}"
        data["contains"].append({"output": text, "expected": CONTAINS})
        data["regex"].append({"output": text, "expected": number})

        calls = [
            {"name": rng.choice(OTHER_TOOLS), "arguments": {"path": f"f{i}.py"}}
            for i in range(rng.randint(1, 4))
        ]
        if passing:
            calls.insert(rng.randrange(len(calls) + 1), {"name": TOOL, "arguments": {"q": "x"}})
        data["behavior"].append({"output": "done", "expected": None, "tool_calls": calls})
    return data


def write(path: Path, seed: int, count: int) -> Path:
    """Write the samples of `generate(seed, count)` to `path` as JSON."""
    path.write_text(json.dumps(generate(seed, count)), encoding="utf-8")
    return path


def read(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The samples written by `write`."""
    data: dict[str, list[dict[str, Any]]] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def plain_loop(check: str, samples: list[dict[str, Any]]) -> Callable[[], list[bool]]:
    """A plain-Python loop doing `check`'s bare test on `samples`, one bool a sample.

    Every side times it beside its own check, alternating, in its own process: each side's
    figure is then its time over this loop's, which load on a shared machine disturbs little,
    and two sides compare through it.
    """
    if check == "behavior":
        calls = [[call["name"] for call in s["tool_calls"]] for s in samples]
        return lambda: [TOOL in names for names in calls]
    if check == "contains":
        texts = [s["output"] for s in samples]
        return lambda: [CONTAINS in text for text in texts]
    if check == "regex":
        search = re.compile(REGEX).search
        texts = [s["output"] for s in samples]
        return lambda: [search(text) is not None for text in texts]
    pairs = [(s["output"], s["expected"]) for s in samples]
    if check == "numeric":
        return lambda: [abs(float(o) - float(e)) <= 1e-6 for o, e in pairs]
    return lambda: [output == expected for output, expected in pairs]
