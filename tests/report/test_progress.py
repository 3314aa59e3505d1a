"""The ETA the progress bar and lines show: from the rate so far, `--` until it is known."""

from __future__ import annotations

import pytest

from gradekit.report.progress import eta_text


@pytest.mark.parametrize(
    ("done", "total", "elapsed", "shown"),
    [
        (0, 100, 5.0, "ETA --"),  # nothing finished: no rate yet
        (10, 100, 0.2, "ETA --"),  # too early to trust the rate
        (10, 100, 1.0, "ETA 9s"),
        (1, 100, 1.0, "ETA 1m39s"),
        (12_000, 200_000, 6.5, "ETA 1m42s"),
        (1, 10_000, 1.0, "ETA 2h46m"),
        (99, 100, 10.0, "ETA 1s"),  # rounded up: never 0 s while cases are left
        (100, 100, 10.0, "ETA 0s"),
        (5, None, 1.0, ""),  # no total (a selection): no ETA
    ],
)
def test_eta(done: int, total: int | None, elapsed: float, shown: str) -> None:
    assert eta_text(done, total, elapsed) == shown
