"""The benchmark helpers that decide the figures: paired ratios, timing, seeded data."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import _timing  # noqa: E402
import peer_data  # noqa: E402


def test_paired_ratio_is_the_median_of_the_ratios_of_each_pair() -> None:
    # Round 2 was slowed down by another job on both sides: its pair still says 2x.
    side = [2.0, 20.0, 2.2, 1.8, 2.0]
    base = [1.0, 10.0, 1.0, 1.0, 0.8]
    assert _timing.paired_ratio(side, base) == pytest.approx(2.0)
    # The ratio of the medians would be 2.0 / 1.0 here too, but not in general:
    assert _timing.paired_ratio([3.0, 1.0, 10.0], [1.0, 1.0, 9.0]) == pytest.approx(1.111, 1e-3)


def test_paired_ratio_refuses_unpaired_figures() -> None:
    with pytest.raises(ValueError, match="need pairs"):
        _timing.paired_ratio([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="need pairs"):
        _timing.paired_ratio([], [])


def test_alternate_rotates_the_order_and_pairs_figures_by_round() -> None:
    calls: list[str] = []

    def side(label: str):  # type: ignore[no-untyped-def]
        def run() -> float:
            calls.append(label)
            return float(len(calls))

        return run

    figures = _timing.alternate({"a": side("a"), "b": side("b"), "c": side("c")}, rounds=3)
    assert calls == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert figures == {"a": [1.0, 6.0, 8.0], "b": [2.0, 4.0, 9.0], "c": [3.0, 5.0, 7.0]}


def test_per_call_us_counts_cpu_time_not_sleep() -> None:
    # A loop that sleeps 20 ms takes almost no CPU: the figure is the CPU, per call.
    figures = _timing.per_call_us(lambda: time.sleep(0.02), calls=10, repeat=2)
    assert len(figures) == 2
    assert all(0 <= us < 1000 for us in figures)  # 20 ms of wall would be 2000 µs per call


def test_call_loop_calls_with_each_argument_tuple() -> None:
    seen: list[tuple[int, int]] = []
    loop = _timing.call_loop(lambda a, b: seen.append((a, b)) or a + b, [(1, 2), (3, 4)])
    sink = loop()
    assert seen == [(1, 2), (3, 4)]
    assert list(sink) == [7]  # each result is dropped as the next comes


def test_peer_samples_are_the_same_for_a_seed_and_half_pass(tmp_path: Path) -> None:
    first = peer_data.read(peer_data.write(tmp_path / "a.json", 7, 200))
    again = peer_data.read(peer_data.write(tmp_path / "b.json", 7, 200))
    other = peer_data.generate(8, 200)
    assert first == again
    assert first != other
    assert sorted(first) == sorted(peer_data.CHECKS)
    assert sum(s["output"] == s["expected"] for s in first["equality"]) == 100
    assert sum(peer_data.CONTAINS in s["output"] for s in first["contains"]) == 100
    tools = [[call["name"] for call in s["tool_calls"]] for s in first["behavior"]]
    assert sum(peer_data.TOOL in names for names in tools) == 100
