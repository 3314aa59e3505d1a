"""Per-grade cost of the built-in text kinds against a plain-Python loop doing the same work.

For each kind: create the grader once, then time `grader.grade(sample)` over N generated
samples (half passing, half failing), handing each result to a sink. The baseline loops over
the same Sample objects, does the same check in plain Python and builds a comparable result
record: a dict with `passed`, `score` and a `message` made with the same f-string shape, handed
to the same kind of sink. By default the sink drops each record as the next arrives (a
`deque(maxlen=1)`), as the runner streams finished cases out; `--keep` keeps them all. The
garbage collector is off while timing (as `timeit` does). Each loop runs R times, gradekit and
baseline alternating; the table shows medians, their ratio (target: at most 3x) and the range
of the ratios of single runs (gradekit run i over plain run i).

    .venv/bin/python bench/graders.py [--samples 100000] [--repeat 11] [--keep]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import random
import re
import statistics
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

from _timing import cpu_model, timed

import gradekit
from gradekit import Sample
from gradekit.graders.equality import punctuation_table

Sink = list[Any] | deque[Any]
"""Where the records go: a list that keeps them, or a deque(maxlen=1) that drops each."""

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def sentence(rng: random.Random, words: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


# -- samples ---------------------------------------------------------------------------------


def equality_samples(rng: random.Random, n: int) -> list[Sample]:
    samples = []
    for i in range(n):
        expected = sentence(rng, 4)
        output = expected if i % 2 else sentence(rng, 4)
        samples.append(Sample(output=output, expected=expected))
    return samples


def noisy_equality_samples(rng: random.Random, n: int) -> list[Sample]:
    samples = []
    for i in range(n):
        expected = sentence(rng, 4)
        output = f"  {expected.title()}. " if i % 2 else sentence(rng, 4) + "!"
        samples.append(Sample(output=output, expected=expected))
    return samples


def numeric_samples(rng: random.Random, n: int) -> list[Sample]:
    samples = []
    for i in range(n):
        value = rng.randint(0, 10**6) / 100
        output = str(value) if i % 2 else str(value + 1)
        samples.append(Sample(output=output, expected=str(value)))
    return samples


def text_samples(rng: random.Random, n: int) -> list[Sample]:
    samples = []
    for i in range(n):
        text = sentence(rng, 12)
        if i % 2:
            text += f" order {rng.randint(1000, 9999)} alpha beta gamma"
        samples.append(Sample(output=text))
    return samples


# -- plain-Python baselines ------------------------------------------------------------------


def plain_equality(samples: list[Sample], sink: Sink) -> Sink:
    append = sink.append
    for sample in samples:
        output = sample.output
        expected = sample.expected
        if output == expected:
            append({"passed": True, "score": 1.0, "message": f"equals {expected!r}"})
        else:
            append(
                {"passed": False, "score": 0.0, "message": f"expected {expected!r}, got {output!r}"}
            )
    return sink


def plain_noisy_equality(samples: list[Sample], sink: Sink) -> Sink:
    table = punctuation_table()
    append = sink.append
    for sample in samples:
        output = sample.output
        expected = sample.expected
        a = " ".join(" ".join(output.casefold().split()).translate(table).split())
        e = " ".join(" ".join(expected.casefold().split()).translate(table).split())
        if a == e:
            append({"passed": True, "score": 1.0, "message": f"{output!r} matches {expected!r}"})
        else:
            message = f"expected {expected!r}, got {output!r} ({e!r} vs {a!r})"
            append({"passed": False, "score": 0.0, "message": message})
    return sink


def plain_numeric(samples: list[Sample], sink: Sink) -> Sink:
    # Binary floats: faster than the exact decimals gradekit uses, so a demanding baseline.
    append = sink.append
    for sample in samples:
        output = sample.output
        expected = sample.expected
        try:
            difference = abs(float(output) - float(expected))
        except ValueError:
            append({"passed": False, "score": 0.0, "message": f"{output!r} is not a number"})
            continue
        if difference <= 1e-6:
            message = f"got {output!r}, expected {expected!r} (off by {difference})"
            append({"passed": True, "score": 1.0, "message": message})
        else:
            message = f"expected {expected!r}, got {output!r} (off by {difference})"
            append({"passed": False, "score": 0.0, "message": message})
    return sink


CONTAINS_VALUES = ["order", "alpha", "gamma"]


def plain_contains(samples: list[Sample], sink: Sink) -> Sink:
    values = CONTAINS_VALUES
    append = sink.append
    for sample in samples:
        output = sample.output
        missing = [value for value in values if value not in output]
        if not missing:
            append({"passed": True, "score": 1.0, "message": f"found all of {values!r}"})
        else:
            score = (len(values) - len(missing)) / len(values)
            message = f"missing {missing!r} in {output!r}"
            append({"passed": False, "score": score, "message": message})
    return sink


def plain_not_contains(samples: list[Sample], sink: Sink) -> Sink:
    values = ["order", "sorry"]
    append = sink.append
    for sample in samples:
        output = sample.output
        found = [value for value in values if value in output]
        if not found:
            append({"passed": True, "score": 1.0, "message": f"found none of {values!r}"})
        else:
            message = f"found {found!r} in {output!r}"
            append({"passed": False, "score": 0.0, "message": message})
    return sink


REGEX = r"order (?P<id>\d+)"


def plain_regex(samples: list[Sample], sink: Sink) -> Sink:
    search = re.compile(REGEX).search
    append = sink.append
    for sample in samples:
        output = sample.output
        match = search(output)
        if match is None:
            message = f"no match for {REGEX!r} in {output!r}"
            append({"passed": False, "score": 0.0, "message": message})
        else:
            append({"passed": True, "score": 1.0, "message": f"found {match[0]!r}"})
    return sink


# (label, kind, options, samples, baseline)
CASES: list[tuple[str, str, dict[str, Any], Callable[..., list[Sample]], Callable[..., Any]]] = [
    ("equality", "equality", {}, equality_samples, plain_equality),
    (
        "equality (3 normalisations)",
        "equality",
        {"case_insensitive": True, "strip_whitespace": True, "strip_punctuation": True},
        noisy_equality_samples,
        plain_noisy_equality,
    ),
    ("numeric", "numeric", {}, numeric_samples, plain_numeric),
    (
        "contains (3 values, all)",
        "contains",
        {"values": CONTAINS_VALUES},
        text_samples,
        plain_contains,
    ),
    (
        "not_contains (2 values)",
        "not_contains",
        {"values": ["order", "sorry"]},
        text_samples,
        plain_not_contains,
    ),
    ("regex (search)", "regex", {"pattern": REGEX}, text_samples, plain_regex),
]


def gradekit_loop(grader: Any, samples: list[Sample], sink: Sink) -> Sink:
    grade = grader.grade
    append = sink.append
    for sample in samples:
        append(grade(sample))
    return sink


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--only", help="run only cases whose label contains this text")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep every result in a list (default: drop each one as the next is made, as the "
        "runner does when it streams cases out)",
    )
    args = parser.parse_args()
    sink: Callable[[], Sink] = list if args.keep else functools.partial(deque, maxlen=1)

    print(
        f"{args.samples:,} samples per kind, median of {args.repeat} runs, results "
        f"{'kept' if args.keep else 'dropped'}; "
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{cpu_model()}, {os.cpu_count()} CPUs, gradekit {gradekit.__version__}",
        file=sys.stderr,
    )
    print(
        "| kind | gradekit grades/s | plain grades/s | gradekit µs/grade | plain µs/grade "
        "| ratio | ratio range |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, kind, options, make_samples, baseline in CASES:
        if args.only and args.only not in label:
            continue
        samples = make_samples(random.Random(2024), args.samples)
        grader = gradekit.create(kind, config=options)
        ours = functools.partial(gradekit_loop, grader, samples)
        plain = functools.partial(baseline, samples)
        ours(sink())
        plain(sink())  # warm up caches and the punctuation table
        ours_times, plain_times = [], []
        for _ in range(args.repeat):
            ours_times.append(timed(functools.partial(ours, sink())))
            plain_times.append(timed(functools.partial(plain, sink())))
        ratios = [ours / plain for ours, plain in zip(ours_times, plain_times, strict=True)]
        ours_median = statistics.median(ours_times)
        plain_median = statistics.median(plain_times)
        n = len(samples)
        print(
            f"| {label} | {n / ours_median:,.0f} | {n / plain_median:,.0f} | "
            f"{ours_median / n * 1e6:.2f} | {plain_median / n * 1e6:.2f} | "
            f"{ours_median / plain_median:.2f}x | {min(ratios):.2f}-{max(ratios):.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
