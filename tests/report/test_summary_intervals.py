"""The intervals and paired statistics from Python: `run_suite(confidence=...)`,
`report.summary` (counted as the run goes, or from the case reports: the same figures),
`compare(...).statistics` and `report.baseline.statistics`, against statsmodels."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from gradekit import Outputs, Statistics, load_suite, run_suite
from gradekit.history.compare import compare
from gradekit.report.model import Summary

np = pytest.importorskip("numpy")
sm = pytest.importorskip("statsmodels.api")
scipy_stats = pytest.importorskip("scipy.stats")

# Attempts, single cases and a two-turn case: the clusters of the pass rate are the case
# names; those of the `contains` grader, scored on each turn, too.
SUITE = """
    name: mixed
    graders: [{kind: contains, values: ["x"]}]
    cases:
      - {name: a, attempts: ["x", "x", "y", "x"]}
      - {name: b, attempts: ["y", "y", "x"]}
      - {name: c, attempts: ["x x", "x"]}
      - {name: d, output: "x"}
      - {name: e, output: "y"}
      - name: f
        turns: [{output: "x"}, {output: "y"}]
"""
PASSES = {"a": [1, 1, 0, 1], "b": [0, 0, 1], "c": [1, 1], "d": [1], "e": [0], "f": [0]}
SCORES = {"a": [1, 1, 0, 1], "b": [0, 0, 1], "c": [1, 1], "d": [1], "e": [0]}
SCORES_F = [1.0, 0.0]  # f's two turns: counted as two results of their own, no attempts


def cluster_interval(groups: list[list[float]], confidence: float) -> list[float]:
    values = np.array([x for group in groups for x in group], dtype=float)
    labels = np.array([i for i, group in enumerate(groups) for _ in group])
    fit = sm.OLS(values, np.ones((len(values), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": labels, "use_correction": False}
    )
    half = scipy_stats.norm.ppf(1 - (1 - confidence) / 2) * float(fit.bse[0])
    mean = float(fit.params[0])
    return [max(mean - half, 0.0), min(mean + half, 1.0)]


@pytest.fixture
def suite_path(tmp_path: Path) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(SUITE))
    return path


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_summary_intervals_counted_as_the_run_goes_match_statsmodels(
    suite_path: Path, confidence: float
) -> None:
    suite = load_suite(suite_path)
    kept = run_suite(suite, jobs=2, statistics=Statistics(confidence=confidence))
    counted = run_suite(
        suite,
        jobs=2,
        outputs=Outputs(keep_cases=False),
        statistics=Statistics(confidence=confidence),
    )
    # From the case reports, and counted without keeping them: the same.
    from_cases = Summary.of(kept.cases, confidence)
    for summary in (kept.summary, counted.summary, from_cases):
        assert summary.interval_level == confidence
        interval = summary.pass_rate_interval
        assert interval is not None
        reference = cluster_interval([[float(x) for x in p] for p in PASSES.values()], confidence)
        assert list(interval) == pytest.approx(reference, abs=1e-12)
        grader = summary.graders["contains"].mean_score_interval
        assert grader is not None
        groups = [[float(x) for x in s] for s in SCORES.values()] + [[x] for x in SCORES_F]
        assert list(grader) == pytest.approx(cluster_interval(groups, confidence), abs=1e-12)
    # The same summary at another level.
    moved = from_cases.at_level(0.99)
    assert moved.interval_level == 0.99
    assert moved.to_dict()["pass_rate_interval"] == pytest.approx(
        cluster_interval([[float(x) for x in p] for p in PASSES.values()], 0.99), abs=1e-12
    )


def test_run_suite_refuses_a_confidence_outside_0_1(suite_path: Path) -> None:
    with pytest.raises(ValueError, match="confidence level must be a number between 0 and 1"):
        run_suite(load_suite(suite_path), statistics=Statistics(confidence=1.0))


def write(tmp_path: Path, name: str, outputs: list[str]) -> Path:
    lines = ["name: s", "graders: [{kind: equality}]", "cases:"]
    lines += [f'  - {{name: c{i}, output: "{o}", expected: "a"}}' for i, o in enumerate(outputs)]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_comparison_statistics_from_python(tmp_path: Path) -> None:
    base = run_suite(load_suite(write(tmp_path, "base.yaml", ["a"] * 30 + ["b"] * 10)))
    after = ["b"] * 8 + ["a"] * 22 + ["b"] * 9 + ["a"]  # 8 regressed, 1 fixed
    new = run_suite(
        load_suite(write(tmp_path, "new.yaml", after)), statistics=Statistics(baseline=base)
    )
    statistics = compare(base, new).statistics
    assert statistics is not None
    assert list(statistics.to_dict()) == [
        "paired",
        "regressed",
        "fixed",
        "pass_rate_change",
        "pass_rate_change_interval",
        "p_value",
        "test",
        "verdict",
        "alpha",
        "interval_level",
        "graders",
    ]
    assert (statistics.paired, statistics.regressed, statistics.fixed) == (40, 8, 1)
    assert statistics.p_value == pytest.approx(2 * (1 + 9) / 2**9, abs=1e-15)  # 0.0390625
    assert statistics.verdict == "worse"
    assert statistics.significant_regression(0.05)
    assert not statistics.significant_regression(0.01)
    # At 99%, the verdict's alpha is 0.01.
    assert compare(base, new, confidence=0.99).statistics.verdict == "no significant change"  # type: ignore[union-attr]
    marks = new.baseline
    assert marks is not None and marks.statistics is not None
    assert marks.statistics == statistics  # per grader too: run_suite(baseline=) as compare
    grader = statistics.graders["equality"]  # type: ignore[index]
    assert grader.mean_score_change == pytest.approx(-7 / 40)
    assert math.isclose(
        grader.p_value,  # type: ignore[arg-type]
        float(
            scipy_stats.ttest_rel(
                [0.0] * 8 + [1.0] + [0.0] * 31, [1.0] * 8 + [0.0] + [0.0] * 31
            ).pvalue
        ),
        rel_tol=1e-9,
    )
