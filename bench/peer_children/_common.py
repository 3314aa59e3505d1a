"""What every peer's child script shares: read the samples, time each check, print JSON.

A child runs in the peer's own virtual environment as `python child_NAME.py DATA REPEAT`
and prints one JSON object: for each check either `{"us": [...], "passed": N, "what": ...}`
(microseconds per call, one figure per repeat; how many samples passed; what was called) or
`{"unavailable": why}`. Beside each check it times the plain loop of `peer_data.plain_loop`
on the same samples, alternating (`plain_us`), so the parent can compare sides run in
different processes through it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _timing import against_plain, call_loop
from peer_data import plain_loop, read


class Check(NamedTuple):
    """One peer check, ready to time: what to call, on which arguments, and what passed."""

    call: Callable[..., Any]
    arguments: list[tuple[Any, ...]]
    passed: Callable[[Any], bool]
    what: str


Builder = Callable[[list[dict[str, Any]]], Check | str]
"""Makes a check from the samples, or says (a string) why the peer has no such check."""


def main(builders: dict[str, Builder]) -> None:
    """Time every check the peer has on the samples of sys.argv[1], sys.argv[2] repeats."""
    data = read(Path(sys.argv[1]))
    repeat = int(sys.argv[2])
    figures: dict[str, dict[str, Any]] = {}
    for name, samples in data.items():
        builder = builders.get(name)
        check = builder(samples) if builder else "no such check"
        if isinstance(check, str):
            figures[name] = {"unavailable": check}
            continue
        passed = sum(bool(check.passed(check.call(*args))) for args in check.arguments)
        loop = call_loop(check.call, check.arguments)
        us, plain = against_plain(loop, plain_loop(name, samples), len(samples), repeat)
        figures[name] = {"us": us, "plain_us": plain, "passed": passed, "what": check.what}
    print(json.dumps(figures))
