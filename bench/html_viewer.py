"""The HTML report at scale: file size against the JSON report, and how long headless Chromium
takes to show the first screen of cases.

For each N, N cases are generated deterministically (seeded): about 72% pass, 18% fail, 7%
error and 3% are two-turn cases whose first turn's error skips the second; two or three
results a turn with messages and details; every turn carries its sample (input, output,
expected; tool calls for 40% of the cases), every case tags and metadata, as DESIGN.md's JSON
report will. The same cases are written with `write_json` and `write_html`; Chromium (headless,
driven over the DevTools pipe) opens the page, and the page reports when its first rows were
painted (`data-first-screen-ms`, milliseconds since navigation started) and when the whole file
was parsed (`data-loaded-ms`: from then on any case opens). Then the first row is clicked, and
the time until its detail shows is measured; last, the time a name filter, a first search
inside inputs and outputs and a second one take (`TYPED`).

    .venv/bin/python bench/html_viewer.py --cases 10000 200000 --repeat 3
    # the same cases written by an older checkout's writer:
    .venv/bin/python bench/html_viewer.py --cases 10000 --pythonpath /tmp/old/src
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORDS = [
    "the",
    "agent",
    "answered",
    "order",
    "refund",
    "weather",
    "city",
    "total",
    "price",
    "growth",
    "rate",
    "tool",
    "search",
    "file",
    "report",
    "build",
    "test",
    "passed",
    "failed",
    "error",
    "user",
    "assistant",
    "system",
    "query",
    "result",
    "value",
    "ticket",
]
TAGS = ["smoke", "regression", "math", "retrieval", "tools", "long"]


def _sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."


def _result(rng: random.Random, kind: str, outcome: str, output: str, expected: str) -> dict:
    passed = outcome == "pass"
    error = "ValueError: the grader could not read the output" if outcome == "error" else None
    details: Any = None
    if kind == "equality":
        message = (
            f"output equals expected {expected!r}"
            if passed
            else (f"expected {expected!r}, got {output!r}")
        )
        details = None if passed else {"output": output, "expected": expected}
    elif kind == "contains":
        word = rng.choice(WORDS)
        message = f"found all of {word!r}" if passed else f"missing {word!r} in {output[:40]!r}"
        details = {"missing": [] if passed else [word]}
    else:
        message = "2/2 checks passed" if passed else "1/2 checks passed; failed: required tool"
        details = {
            "checks": [
                {"name": "required tool search", "passed": True, "message": "called 1 time"},
                {"name": "order", "passed": passed, "message": "in order" if passed else "no"},
            ]
        }
    return {
        "kind": kind,
        "name": kind,
        "passed": passed,
        "score": 1.0 if passed else (0.0 if error else round(rng.random() * 0.9, 3)),
        "message": message,
        "details": None if error else details,
        "error": error,
        "advisory": False,
        "weight": 1.0,
        "duration_ms": round(rng.random() * 2, 4),
    }


def _turn(rng: random.Random, index: int, outcome: str, tools: bool) -> dict:
    output = _sentence(rng, 6, 24)
    expected = _sentence(rng, 2, 6)
    kinds = ["equality", "contains"] + (["behavior"] if tools else [])
    bad = rng.randrange(len(kinds))
    results = [
        _result(rng, kind, outcome if k == bad else "pass", output, expected)
        for k, kind in enumerate(kinds)
    ]
    turn = {
        "index": index,
        "passed": outcome == "pass",
        "score": round(sum(r["score"] for r in results) / len(results), 4),
        "errored": outcome == "error",
        "results": results,
        "input": _sentence(rng, 8, 30),
        "output": output,
        "expected": expected,
    }
    if tools:
        turn["tool_calls"] = [
            {
                "name": rng.choice(["search", "read_file", "calculator"]),
                "arguments": {"query": _sentence(rng, 2, 5)},
                "result": _sentence(rng, 3, 12),
                "error": None,
                "turn": step,
            }
            for step in range(rng.randint(1, 3))
        ]
    return turn


def generate(count: int, seed: int = 14) -> Iterator[dict]:
    """`count` case dicts in the JSON report's form (with samples), the same for one seed."""
    rng = random.Random(seed)
    for i in range(count):
        draw = rng.random()
        outcome = "pass" if draw < 0.72 else "fail" if draw < 0.90 else "error"
        tools = rng.random() < 0.4
        turns = [_turn(rng, 0, outcome, tools)]
        if draw >= 0.97:  # the first turn's error ends the case: the second is skipped
            turns[0] = _turn(rng, 0, "error", tools)
            turns.append(
                {
                    "index": 1,
                    "passed": False,
                    "score": 0.0,
                    "errored": False,
                    "results": [],
                    "skipped": True,
                }
            )
            outcome = "error"
        yield {
            "name": f"case-{i:07d}-{rng.choice(WORDS)}",
            "passed": outcome == "pass",
            "score": round(min(turn["score"] for turn in turns), 4),
            "errored": outcome == "error",
            "duration_ms": round(rng.random() * 40, 3),
            "turns": turns,
            "tags": rng.sample(TAGS, rng.randint(0, 2)),
            "metadata": {"source": "bench", "difficulty": rng.randint(1, 5)},
        }


def write_reports(count: int, folder: Path) -> dict[str, float]:
    """Write the JSON and HTML reports of `count` generated cases; sizes and write times."""
    from gradekit.report import write_html, write_json
    from gradekit.report.model import CaseReport, SuiteReport, Summary

    summary = Summary.of(CaseReport.from_dict(case) for case in generate(count))
    report = SuiteReport("bench", (), duration_ms=1234.5, stored_summary=summary)
    encode = json.JSONEncoder(ensure_ascii=False).encode
    started = time.perf_counter()
    write_json(report, folder / "report.json", cases=(encode(c) for c in generate(count)))
    json_seconds = time.perf_counter() - started
    started = time.perf_counter()
    try:
        write_html(report, folder / "report.html", cases=generate(count))
    except (TypeError, AttributeError):  # an older writer takes CaseReports only (no samples)
        write_html(report, folder / "report.html", cases=map(CaseReport.from_dict, generate(count)))
    html_seconds = time.perf_counter() - started
    return {
        "json_bytes": (folder / "report.json").stat().st_size,
        "html_bytes": (folder / "report.html").stat().st_size,
        "json_write_s": json_seconds,
        "html_write_s": html_seconds,
    }


def _browser() -> Any:
    sys.path.insert(0, str(REPO / "tests" / "acceptance"))
    from chromium import Browser

    return Browser()


def _wait(browser: Any, expression: str, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = browser.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            return None
        time.sleep(0.02)


FIRST_SCREEN = (
    "document.body && (document.body.dataset.firstScreenMs || ("
    "document.body.dataset.ready === 'true' && !document.getElementById('gk-index')"
    " ? String(performance.now()) : null))"
)
"""The page's first-screen mark; for an older page (no mark, every row drawn at once), the time
its script finished, read when seen."""


TYPED = {
    "filter_ms": ("filter", "*refund*"),
    "search_first_ms": ("search", "weather refund"),
    "search_again_ms": ("search", "weather"),
}
"""What is typed once the page has loaded, in this order: each is timed in the page (the
list filtered and its rows drawn); `search_first_ms` includes reading the searched text."""


def _typed(element: str, text: str) -> str:
    return (
        f"(e => {{ if (!e) return null; const t = performance.now(); e.value = {text!r};"
        " e.dispatchEvent(new Event('input')); return performance.now() - t; })"
        f"(document.getElementById({element!r}))"
    )


def open_in_chromium(page: Path, timeout: float) -> dict[str, float | None]:
    """Open `page` in a fresh headless Chromium; the page's own marks and wall times."""
    browser = _browser()
    try:
        browser.open("about:blank")
        browser.call("Page.enable")
        browser.resize(1400, 900)
        started = time.monotonic()
        browser.call("Page.navigate", {"url": page.resolve().as_uri()})
        first = _wait(browser, FIRST_SCREEN, timeout)
        first_wall = time.monotonic() - started
        rows = browser.evaluate(
            "document.querySelectorAll('.row.case:not([hidden]), tr.case').length"
        )
        loaded = _wait(
            browser,
            "document.body && (document.body.dataset.loadedMs || (document.body.dataset"
            ".ready === 'true' && !document.getElementById('gk-index') ? 'old' : null))",
            timeout,
        )
        loaded = first if loaded == "old" else loaded
        loaded_wall = time.monotonic() - started
        clicked = time.monotonic()
        browser.evaluate(
            "(document.querySelector('.row.case') || document.querySelector('tr.case summary'))"
            ".click()"
        )
        opened = _wait(
            browser,
            "!!document.querySelector('#case-detail .turn, tr.case details[open]')",
            timeout,
        )
        open_wall = time.monotonic() - clicked
        timed = {key: browser.evaluate(_typed(*typed)) for key, typed in TYPED.items()}
        return {
            **timed,
            "first_screen_ms": float(first) if first else None,
            "first_screen_wall_s": first_wall if first else None,
            "rows_drawn": rows,
            "loaded_ms": float(loaded) if loaded else None,
            "loaded_wall_s": loaded_wall if loaded else None,
            "open_case_s": open_wall if opened else None,
        }
    finally:
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[10_000, 200_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--pythonpath", help="write the reports with the gradekit found here")
    parser.add_argument("--keep", type=Path, help="keep the reports in this folder")
    args = parser.parse_args()
    for count in args.cases:
        with tempfile.TemporaryDirectory() as scratch:
            folder = args.keep / str(count) if args.keep else Path(scratch)
            folder.mkdir(parents=True, exist_ok=True)
            env = dict(os.environ)
            if args.pythonpath:
                env["PYTHONPATH"] = args.pythonpath
            code = (
                f"import sys, json; sys.path.insert(0, {str(REPO / 'bench')!r}); "
                "import html_viewer as b; from pathlib import Path; "
                f"print(json.dumps(b.write_reports({count}, Path({str(folder)!r}))))"
            )
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            sizes = json.loads(done.stdout)
            runs = [
                open_in_chromium(folder / "report.html", args.timeout) for _ in range(args.repeat)
            ]

            def median(key: str, runs: list[dict[str, Any]] = runs) -> str:
                values = [run[key] for run in runs if run[key] is not None]
                if len(values) < len(runs):
                    return f"not reached in {args.timeout:.0f} s"
                return f"{statistics.median(values):.3f}"

            print(
                f"{count:>9,} cases | JSON {sizes['json_bytes'] / 1e6:8.1f} MB "
                f"({sizes['json_write_s']:.1f} s) | HTML {sizes['html_bytes'] / 1e6:8.1f} MB "
                f"({sizes['html_write_s']:.1f} s), {sizes['html_bytes'] / sizes['json_bytes']:.2f}x"
                f" | first screen {median('first_screen_ms')} ms in page, "
                f"{median('first_screen_wall_s')} s wall, rows {runs[0]['rows_drawn']} "
                f"| parsed {median('loaded_ms')} ms | open a case {median('open_case_s')} s"
                + "".join(f" | {key} {median(key)}" for key in TYPED)
            )


if __name__ == "__main__":
    main()
