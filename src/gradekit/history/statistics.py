"""Significance of the change between two runs, closed-form with the standard library alone,
after Miller (2024), "Adding Error Bars to Evals" (arXiv 2411.00640): `mcnemar_exact_p`
(regressed against fixed cases, each graded once in each run); `paired_t_p` (per-case
differences, from `regularized_beta`); `PairedDifferences` and `paired_statistics`, a
comparison's `statistics` (`PairedStatistics`); and `verdict_line`, the comparison in one
line as every report says it. The intervals of a single run (Wilson, clustered) are the
report's: `gradekit.report.attempts`, whose confidence level this module shares. Nothing
here reads reports: callers hand in counts and values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

import attrs

from gradekit.report.attempts import DEFAULT_CONFIDENCE, Interval, check_confidence, z_value
from gradekit.report.text import level_text, percent, points

__all__ = [
    "DEFAULT_ALPHA",
    "GraderChange",
    "PairedDifferences",
    "PairedStatistics",
    "Test",
    "Verdict",
    "mcnemar_exact_p",
    "paired_statistics",
    "paired_t_p",
    "regularized_beta",
    "student_t_two_sided_p",
    "verdict_line",
    "verdict_of",
]

DEFAULT_ALPHA: Final = 0.05
"""The significance level of `--fail-on significant-regression` when none is given."""

Test = Literal["mcnemar-exact", "paired-t"]
"""The paired test a comparison made: McNemar's exact test (each case graded once in both
runs) or the paired t-test (several attempts per case: on the per-case mean pass)."""

Verdict = Literal["worse", "better", "no significant change"]
"""What a comparison concludes: significantly worse, significantly better, or neither."""

_EXACT_BINOMIAL_UP_TO: Final = 5000
"""McNemar's p-value is an exact sum of binomial coefficients up to this many discordant
pairs; past it, the same tail from `regularized_beta` (as precise, far faster)."""


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, by the modified Lentz method
    (Numerical Recipes, `betacf`); converges fast for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        numerator = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + numerator * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + numerator / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        numerator = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + numerator * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + numerator / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return h


def _beta(a: float, b: float, x: float, y: float) -> float:
    """I_x(a, b) given x and y = 1 - x, each computed exactly by the caller where it can."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _continued_fraction(b, a, y) / b


def regularized_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and x in [0, 1]:
    what Student's t and the binomial tails are computed from."""
    if not (a > 0.0 and b > 0.0):
        raise ValueError(f"a and b must be > 0, got a={a!r}, b={b!r}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be from 0 to 1, got {x!r}")
    return _beta(a, b, x, 1.0 - x)


def student_t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df!r}")
    if math.isnan(t) or math.isinf(t):
        return math.nan if math.isnan(t) else 0.0
    t2 = t * t
    # x = df / (df + t²) and 1 - x = t² / (df + t²), each without a subtraction.
    return min(1.0, _beta(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2)))


def mcnemar_exact_p(regressed: int, fixed: int) -> float:
    """McNemar's exact test: the two-sided binomial test (p = 1/2) of `regressed` against
    `fixed` among the discordant pairs; 1.0 when both are 0."""
    if regressed < 0 or fixed < 0:
        raise ValueError(f"counts must be >= 0, got {regressed} and {fixed}")
    n = regressed + fixed
    k = min(regressed, fixed)
    if 2 * k >= n:  # as many each way: nothing to tell them apart
        return 1.0
    if n <= _EXACT_BINOMIAL_UP_TO:
        from fractions import Fraction

        term = total = 1
        for i in range(k):
            term = term * (n - i) // (i + 1)
            total += term
        return float(min(Fraction(1), Fraction(2 * total, 2**n)))
    # P(X <= k) for X ~ Binomial(n, 1/2) is I_{1/2}(n - k, k + 1).
    return min(1.0, 2.0 * _beta(n - k, k + 1.0, 0.5, 0.5))


def paired_t_p(n: int, mean: float, sd: float) -> float | None:
    """The two-sided paired t-test's p-value of `n` per-case differences of mean `mean` and
    standard deviation `sd` (ddof 1). None under 2 differences; with no spread (none beyond
    rounding, 1e-12), 1.0 when the mean is 0 (no case changed), else 0.0 (all changed alike)."""
    if n < 2:
        return None
    # Scores lie in [0, 1]: a spread this small is float rounding (0.9999999999999999 vs 1.0).
    if sd <= 1e-12:
        return 1.0 if abs(mean) <= 1e-12 else 0.0
    return student_t_two_sided_p(mean / (sd / math.sqrt(n)), n - 1)


def verdict_of(change: float | None, p_value: float | None, alpha: float) -> Verdict:
    """`worse` or `better` when p < alpha in the direction of `change`, else no change."""
    if change is None or p_value is None or not p_value < alpha or change == 0.0:
        return "no significant change"
    return "worse" if change < 0.0 else "better"


class PairedDifferences:
    """Per-case differences new - base between two runs, accumulated one case at a time
    (Welford's running mean and variance): how many, their mean and spread, and how many went
    down (`regressed`) or up (`fixed`)."""

    __slots__ = ("_m2", "fixed", "mean", "n", "regressed")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0
        self.regressed = 0
        self.fixed = 0

    def add(self, base: float, new: float) -> None:
        """Count one paired case: its value in the base run and in the new one."""
        difference = new - base
        self.n += 1
        delta = difference - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (difference - self.mean)
        if difference < 0.0:
            self.regressed += 1
        elif difference > 0.0:
            self.fixed += 1

    def add_all(self, pairs: Iterable[tuple[float, float]]) -> PairedDifferences:
        """Count every (base, new) pair; this accumulator."""
        for base, new in pairs:
            self.add(base, new)
        return self

    @property
    def sd(self) -> float | None:
        """The standard deviation of the differences (ddof 1); None under 2."""
        return math.sqrt(max(self._m2, 0.0) / (self.n - 1)) if self.n > 1 else None

    def change(self) -> float | None:
        """The mean difference; None with no pair."""
        return self.mean if self.n else None

    def interval(self, confidence: float = DEFAULT_CONFIDENCE) -> Interval | None:
        """The mean difference ± z · sd / sqrt(n); None under 2 pairs."""
        sd = self.sd
        if sd is None:
            return None
        half = z_value(confidence) * sd / math.sqrt(self.n)
        return (self.mean - half, self.mean + half)

    def t_p_value(self) -> float | None:
        """The paired t-test's two-sided p-value (see `paired_t_p`)."""
        sd = self.sd
        return None if sd is None else paired_t_p(self.n, self.mean, sd)


def _interval_data(interval: Interval | None) -> list[float] | None:
    return None if interval is None else list(interval)


@attrs.frozen
class GraderChange:
    """How one grader's mean score moved over the cases both runs scored with it: the mean
    per-case change, its interval and the paired t-test's p-value (None under 2 cases)."""

    paired: int
    mean_score_change: float | None
    mean_score_change_interval: Interval | None
    p_value: float | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: an item of `statistics.graders`."""
        return {
            "paired": self.paired,
            "mean_score_change": self.mean_score_change,
            "mean_score_change_interval": _interval_data(self.mean_score_change_interval),
            "p_value": self.p_value,
        }


@attrs.frozen
class PairedStatistics:
    """A comparison's paired statistics (docs/reports.md, "Error bars and significance").

    `paired`: cases in both runs; `regressed` / `fixed`: of them, those whose pass (or mean
    pass over attempts) went down / up; `pass_rate_change`: the mean per-case change, with
    its interval at `interval_level`; `p_value` of `test`; `verdict` at `alpha`; per grader,
    its `GraderChange`."""

    paired: int
    regressed: int
    fixed: int
    pass_rate_change: float | None
    pass_rate_change_interval: Interval | None
    p_value: float | None
    test: Test
    verdict: Verdict
    alpha: float = DEFAULT_ALPHA
    interval_level: float = DEFAULT_CONFIDENCE
    graders: Mapping[str, GraderChange] | None = None
    """None where the runs' scores are not known (`gradekit run --baseline`)."""

    def significant_regression(self, alpha: float) -> bool:
        """Whether the new run is worse with p < `alpha`."""
        return verdict_of(self.pass_rate_change, self.p_value, alpha) == "worse"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: a comparison's `statistics`."""
        return {
            "paired": self.paired,
            "regressed": self.regressed,
            "fixed": self.fixed,
            "pass_rate_change": self.pass_rate_change,
            "pass_rate_change_interval": _interval_data(self.pass_rate_change_interval),
            "p_value": self.p_value,
            "test": self.test,
            "verdict": self.verdict,
            "alpha": self.alpha,
            "interval_level": self.interval_level,
            **(
                {}
                if self.graders is None
                else {"graders": {name: c.to_dict() for name, c in self.graders.items()}}
            ),
        }


def paired_statistics(
    passes: PairedDifferences,
    *,
    attempts: bool,
    graders: Mapping[str, PairedDifferences] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedStatistics:
    """The statistics of paired cases: `passes` holds each paired case's pass (1 or 0; with
    `attempts`, its mean pass over its attempts) in both runs; `graders`, each grader's
    per-case mean score in both (None: not known, left out of the JSON). The test is
    McNemar's exact test without attempts, the paired t-test with them; the verdict is at
    alpha = 1 - `confidence`."""
    confidence = check_confidence(confidence)
    alpha = 1.0 - confidence
    if attempts:
        test: Test = "paired-t"
        p_value = passes.t_p_value()
    else:
        test = "mcnemar-exact"
        p_value = mcnemar_exact_p(passes.regressed, passes.fixed) if passes.n else None
    change = passes.change()
    return PairedStatistics(
        paired=passes.n,
        regressed=passes.regressed,
        fixed=passes.fixed,
        pass_rate_change=change,
        pass_rate_change_interval=passes.interval(confidence),
        p_value=p_value,
        test=test,
        verdict=verdict_of(change, p_value, alpha),
        alpha=round(alpha, 12),
        interval_level=confidence,
        graders=None
        if graders is None
        else {
            name: GraderChange(
                paired=scores.n,
                mean_score_change=scores.change(),
                mean_score_change_interval=scores.interval(confidence),
                p_value=scores.t_p_value(),
            )
            for name, scores in sorted(graders.items())
        },
    )


def _p_text(p_value: float) -> str:
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.2g}"


def verdict_line(
    base_rate: float | None,
    new_rate: float | None,
    statistics: PairedStatistics,
    *,
    all_paired: bool = True,
) -> str:
    """A comparison in one line, as the console, Markdown and HTML say it: `pass rate 80.0% ->
    74.5%: -5.5 points (95% CI -9.8 to -1.2), 16 regressed / 5 fixed, McNemar p = 0.027:
    worse`. The rates are over each run's cases, the change, its interval and the test over
    the cases in both: when, `all_paired` False, some case is in one run only, the line gives
    the change of the rates, then the paired figures `over the N cases in both runs`."""
    head = f"pass rate {percent(base_rate)} -> {percent(new_rate)}"
    s = statistics
    if s.pass_rate_change is None:
        return f"{head}: no case in both runs to compare"
    if not all_paired:
        if base_rate is not None and new_rate is not None:
            head += f" ({points(new_rate - base_rate)} points)"
        noun = "case" if s.paired == 1 else "cases"
        head += f"; over the {s.paired} {noun} in both runs"
    parts = [f"{points(s.pass_rate_change)} points"]
    interval = s.pass_rate_change_interval
    if interval is not None:
        low, high = interval
        parts[0] += f" ({level_text(s.interval_level)} CI {points(low)} to {points(high)})"
    parts.append(f"{s.regressed} regressed / {s.fixed} fixed")
    if s.p_value is None:
        parts.append("too few paired cases for a test")
    else:
        test = "McNemar" if s.test == "mcnemar-exact" else "paired t"
        parts.append(f"{test} {_p_text(s.p_value)}")
    return f"{head}: {', '.join(parts)}: {s.verdict}"
