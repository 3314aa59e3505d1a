"""Every figure of gradekit.history.statistics against the reference implementations (scipy,
statsmodels) on many random inputs, to 1e-9."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gradekit.history.statistics import (
    PairedDifferences,
    mcnemar_exact_p,
    paired_statistics,
    paired_t_p,
    regularized_beta,
    student_t_two_sided_p,
)
from gradekit.report.attempts import (
    check_confidence,
    clustered_interval,
    clustered_se,
    wilson_interval,
    z_value,
)

np = pytest.importorskip("numpy")
scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")
proportion = pytest.importorskip("statsmodels.stats.proportion")
contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
sm = pytest.importorskip("statsmodels.api")

TOLERANCE = 1e-9

confidences = st.floats(0.5, 0.999)


def close(ours: float, reference: float) -> bool:
    """Equal to 1e-9, relative for figures above 1, absolute below (p-values, rates)."""
    return math.isclose(ours, reference, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


@given(confidences)
def test_z_is_the_normal_quantile(confidence: float) -> None:
    assert close(z_value(confidence), scipy_stats.norm.ppf(1 - (1 - confidence) / 2))


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, "0.9", math.nan])
def test_a_confidence_outside_0_1_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        check_confidence(bad)  # type: ignore[arg-type]


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(1, 100_000))
    return draw(st.integers(0, n)), n


@settings(max_examples=300)
@given(counts(), confidences)
def test_wilson_matches_statsmodels(count_n: tuple[int, int], confidence: float) -> None:
    successes, n = count_n
    interval = wilson_interval(successes, n, confidence)
    assert interval is not None
    low, high = proportion.proportion_confint(successes, n, 1 - confidence, method="wilson")
    assert close(interval[0], max(low, 0.0))
    assert close(interval[1], min(high, 1.0))


def test_wilson_of_no_case_is_none() -> None:
    assert wilson_interval(0, 0) is None


@st.composite
def clusters(draw: st.DrawFn) -> list[list[float]]:
    """Clusters of values in [0, 1]: some 0/1 (passes), some any score; sizes 1 to 12."""
    binary = draw(st.booleans())
    value = st.sampled_from([0.0, 1.0]) if binary else st.floats(0.0, 1.0)
    return draw(st.lists(st.lists(value, min_size=1, max_size=12), min_size=2, max_size=60))


def statsmodels_clustered_se(groups: list[list[float]]) -> tuple[float, float]:
    values = np.array([x for group in groups for x in group])
    labels = np.array([i for i, group in enumerate(groups) for _ in group])
    fit = sm.OLS(values, np.ones((len(values), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": labels, "use_correction": False}
    )
    return float(fit.params[0]), float(fit.bse[0])


@settings(max_examples=200)
@given(clusters(), confidences)
def test_clustered_se_matches_statsmodels_cluster_robust_ols(
    groups: list[list[float]], confidence: float
) -> None:
    found = clustered_se((sum(group), len(group)) for group in groups)
    assert found is not None
    mean, se, n = found
    reference_mean, reference_se = statsmodels_clustered_se(groups)
    assert n == sum(len(group) for group in groups)
    assert close(mean, reference_mean)
    assert close(se, reference_se)
    interval = clustered_interval(((sum(g), len(g)) for g in groups), confidence)
    assert interval is not None
    half = scipy_stats.norm.ppf(1 - (1 - confidence) / 2) * reference_se
    assert close(interval[0], max(reference_mean - half, 0.0))
    assert close(interval[1], min(reference_mean + half, 1.0))


def test_the_clustered_se_formula_written_out() -> None:
    """SE = sqrt(Σ_c (Σ_i (x - mean))²) / N, by hand on a tiny example."""
    groups = [[1.0, 1.0, 0.0], [0.0], [1.0, 1.0]]  # mean 4/6
    mean = 4 / 6
    spread = (2 - 3 * mean) ** 2 + (0 - mean) ** 2 + (2 - 2 * mean) ** 2
    assert clustered_se((sum(g), len(g)) for g in groups) == pytest.approx(
        (mean, math.sqrt(spread) / 6, 6), abs=1e-15
    )


@st.composite
def beta_arguments(draw: st.DrawFn) -> tuple[float, float, float]:
    shape = st.one_of(st.floats(0.05, 5.0), st.floats(5.0, 5000.0), st.integers(1, 100_000))
    return draw(shape), draw(shape), draw(st.floats(0.0, 1.0))


@settings(max_examples=500)
@given(beta_arguments())
def test_regularized_beta_matches_scipy(abx: tuple[float, float, float]) -> None:
    a, b, x = abx
    assert close(regularized_beta(a, b, x), float(scipy_special.betainc(a, b, x)))


@st.composite
def t_arguments(draw: st.DrawFn) -> tuple[float, int]:
    df = draw(st.one_of(st.integers(1, 5), st.integers(1, 100_000)))
    t = draw(
        st.one_of(
            st.floats(-5.0, 5.0),
            st.floats(-1e-6, 1e-6),
            st.floats(-1e6, 1e6),
            st.sampled_from([30.0, -45.0, 1e3, 1e8]),
        )
    )
    return t, df


@settings(max_examples=500)
@given(t_arguments())
def test_student_t_p_matches_scipy_small_n_and_extreme_t(t_df: tuple[float, int]) -> None:
    t, df = t_df
    ours = student_t_two_sided_p(t, df)
    if abs(t) >= 1e-4:
        assert close(ours, float(2 * scipy_stats.t.sf(abs(t), df)))
    # Below, scipy's t.sf loses digits (df=1, t=3.8e-8: off by 1.2e-9 from the exact
    # Cauchy tail 1 - 2 atan(t) / pi); its incomplete beta on t² / (df + t²) keeps them.
    t2 = t * t
    if t2 < df:
        reference = float(scipy_special.betaincc(0.5, df / 2, t2 / (df + t2)))
    else:
        reference = float(scipy_special.betainc(df / 2, 0.5, df / (df + t2)))
    assert close(ours, reference)
    if df == 1:
        assert close(ours, 1 - 2 * math.atan(abs(t)) / math.pi)
    if reference > 1e-280:  # tiny tails: to 1e-9 of their own size too
        assert math.isclose(ours, reference, rel_tol=1e-8)


@st.composite
def discordant(draw: st.DrawFn) -> tuple[int, int]:
    size = st.one_of(st.integers(0, 30), st.integers(0, 3000), st.integers(0, 20_000))
    return draw(size), draw(size)


@settings(max_examples=300)
@given(discordant())
def test_mcnemar_matches_statsmodels_and_binomtest(counts_: tuple[int, int]) -> None:
    regressed, fixed = counts_
    ours = mcnemar_exact_p(regressed, fixed)
    table = [[10, regressed], [fixed, 7]]
    assert close(ours, float(contingency.mcnemar(table, exact=True).pvalue))
    if regressed + fixed:
        reference = scipy_stats.binomtest(regressed, regressed + fixed, 0.5).pvalue
        assert close(ours, float(reference))
        if reference > 1e-280:
            assert math.isclose(ours, reference, rel_tol=1e-8)


def test_mcnemar_with_no_discordant_pair_is_1() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0


@st.composite
def paired_runs(draw: st.DrawFn) -> tuple[list[float], list[float]]:
    n = draw(st.integers(2, 80))
    value = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.25, 0.5, 1.0]))
    base = draw(st.lists(value, min_size=n, max_size=n))
    new = draw(st.lists(value, min_size=n, max_size=n))
    return base, new


@settings(max_examples=300)
@given(paired_runs(), confidences)
# Averages that differ by rounding alone (found by hypothesis): no spread, not a p of 0.32.
@example(runs=([1.0, 0.0, 0.5, 0.0], [0.9999999999999999, 0.0, 0.5, 0.0]), confidence=0.5)
def test_paired_t_and_interval_match_ttest_rel(
    runs: tuple[list[float], list[float]], confidence: float
) -> None:
    base, new = runs
    differences = PairedDifferences().add_all(zip(base, new, strict=True))
    d = np.array(new) - np.array(base)
    assert close(differences.mean, float(d.mean()))
    sd = float(d.std(ddof=1))
    assert differences.sd is not None
    assert close(differences.sd, sd)
    interval = differences.interval(confidence)
    assert interval is not None
    half = scipy_stats.norm.ppf(1 - (1 - confidence) / 2) * sd / math.sqrt(len(d))
    assert close(interval[0], float(d.mean()) - half)
    assert close(interval[1], float(d.mean()) + half)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on no spread (its p is then nan)
        reference = float(scipy_stats.ttest_rel(new, base).pvalue)
    ours = differences.t_p_value()
    if math.isnan(reference):
        assert ours in (0.0, 1.0)  # no spread: documented, where scipy gives nan
    elif sd < 1e-12:
        # A spread within rounding: one side may see none (0 or 1) where the other sees a tiny
        # real one (one difference of 5e-51 among zeros: t = 1, p = 0.33 on both sides).
        assert ours in (0.0, 1.0) or (ours is not None and close(ours, reference))
    else:
        assert ours is not None
        assert close(ours, reference)


def test_paired_t_edges() -> None:
    assert paired_t_p(1, 0.5, 0.0) is None
    assert paired_t_p(5, 0.0, 0.0) == 1.0
    assert paired_t_p(5, -0.2, 0.0) == 0.0


@pytest.mark.parametrize(
    ("regressed", "fixed", "verdict"),
    [
        (16, 5, "worse"),
        (5, 16, "better"),
        (9, 5, "no significant change"),
        (0, 0, "no significant change"),
    ],
)
def test_verdict_follows_mcnemar_and_its_direction(
    regressed: int, fixed: int, verdict: str
) -> None:
    pairs = [(1.0, 0.0)] * regressed + [(0.0, 1.0)] * fixed + [(1.0, 1.0)] * 180
    result = paired_statistics(PairedDifferences().add_all(pairs), attempts=False)
    assert result.test == "mcnemar-exact"
    assert result.verdict == verdict
    assert result.p_value == pytest.approx(
        float(contingency.mcnemar([[180, regressed], [fixed, 0]], exact=True).pvalue), abs=1e-12
    )
    assert result.pass_rate_change == pytest.approx((fixed - regressed) / (regressed + fixed + 180))


def _smallest_wilson_n(rate: float) -> int:
    n = 1
    while True:
        interval = wilson_interval(rate * n, n)
        assert interval is not None
        if (interval[1] - interval[0]) / 2 <= 0.05:
            return n
        n += 1


@pytest.mark.parametrize(
    ("rate", "one_run", "independent"),
    [(0.5, 381, 1565), (0.7, 320, 1377), (0.8, 245, 1094), (0.9, 141, 686), (0.95, 83, 435)],
)
def test_the_cases_needed_table_of_docs_reports(
    rate: float, one_run: int, independent: int
) -> None:
    """docs/reports.md, "How many cases a suite needs": the first table."""
    assert _smallest_wilson_n(rate) == one_run
    z_alpha, z_beta = z_value(0.95), float(scipy_stats.norm.ppf(0.8))
    p1, p2 = rate, rate - 0.05
    mean = (p1 + p2) / 2
    spread = z_alpha * math.sqrt(2 * mean * (1 - mean)) + z_beta * math.sqrt(
        p1 * (1 - p1) + p2 * (1 - p2)
    )
    assert math.ceil((spread / 0.05) ** 2) == independent


@pytest.mark.parametrize(
    ("regressed", "fixed", "needed"),
    [(0.05, 0.0, 120), (0.075, 0.025, 200), (0.10, 0.05, 280), (0.15, 0.10, 440)],
)
def test_the_paired_cases_needed_table_of_docs_reports(
    regressed: float, fixed: float, needed: int
) -> None:
    """docs/reports.md: the smallest suite (whole cases regressed and fixed) where McNemar's
    exact test finds the 5-point drop at p < 0.05."""

    def whole(x: float) -> bool:
        return abs(x - round(x)) < 1e-9

    found = next(
        n
        for n in range(20, 2000, 20)
        if whole(n * regressed)
        and whole(n * fixed)
        and mcnemar_exact_p(round(n * regressed), round(n * fixed)) < 0.05
    )
    assert found == needed


@pytest.mark.parametrize(("attempts", "half_width"), [(1, 7.8), (5, 5.0), (20, 4.2)])
def test_the_attempts_table_of_docs_reports(attempts: int, half_width: float) -> None:
    """docs/reports.md, "Why attempts narrow the interval": 50 cases that always pass and 50
    that pass 60% of the time, each tried `attempts` times; the expected clustered interval."""
    # The expected Σ_c (S_c - n_c m)² / N², with S_c ~ Binomial(k, p_c) around k m = 0.8 k.
    k, m = attempts, 0.8
    spread = 50 * (k * 1.0 - k * m) ** 2 + 50 * ((k * 0.6 - k * m) ** 2 + k * 0.6 * 0.4)
    se = math.sqrt(spread) / (100 * k)
    assert round(100 * z_value() * se, 1) == half_width
