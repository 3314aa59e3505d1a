"""Write arithmetic.jsonl: 300 single-turn arithmetic cases for the quickstart suite.

Run from anywhere: `python examples/quickstart/make_dataset.py`. The output is committed; the
cases are the same on every run (a fixed seed).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

CASES = 300
HERE = Path(__file__).resolve().parent


def main() -> None:
    """Write the dataset beside this script."""
    rng = random.Random(20240601)
    lines = []
    for index in range(CASES):
        a, b = rng.randint(2, 999), rng.randint(2, 99)
        operator = rng.choice("+-*")
        answer = {"+": a + b, "-": a - b, "*": a * b}[operator]
        case = {
            "name": f"arithmetic-{index:03d}",
            "input": f"What is {a} {operator} {b}?",
            "output": f"{a} {operator} {b} = {answer}",
            "expected": answer,
            "graders": [{"kind": "numeric", "extract": "last"}],
        }
        lines.append(json.dumps(case))
    (HERE / "arithmetic.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
