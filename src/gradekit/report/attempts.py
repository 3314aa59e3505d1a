"""Many attempts per case, and the estimators of a summary: pass@k, pass^k and the
intervals of rates and means.

**Attempts.** A case given several attempts is graded as one case report per attempt (same
name, its `attempt` index). `AttemptTally` counts them, case group by case group, as a run
finishes them (a run too large to keep its reports still counts); `PassAtK` is what the
reports show: for each group its attempts (passed, failed, errored) and, for each k up to its
number of attempts n, pass@k and pass^k, and the means over the groups with at least k
attempts. An errored attempt is not a pass, and is counted apart. The means carry an interval
(`mean_interval`): the mean over the groups ± z times the standard error of the groups'
figures (each group one value), for every k at which at least two groups are counted. Which k
are shown: those asked for (`gradekit run --k 1,5,10`, `Statistics(k=...)`), else `DEFAULT_KS`
that are at most the largest n, and the largest n itself. The console, Markdown and JUnit
reports show each mean with its interval where it has one (`mean_shown`), as the pass rate is
shown.

**Estimators**, from counts alone (the standard library only), after Miller (2024), "Adding
Error Bars to Evals", arXiv 2411.00640: `wilson_interval` (a proportion, each case graded
once) and `clustered_interval` (a mean ± z · its cluster-robust standard error without
small-sample correction, SE = sqrt(Σ_c (Σ_i (x_i - mean))²) / N, clusters being cases).
pass@k is the unbiased estimator of Chen et al. (2021), "Evaluating Large Language Models
Trained on Code": of n attempts, c passed; the chance that at least one of k attempts drawn
without replacement passes is `1 - C(n-c, k) / C(n, k)`. pass^k (Yao et al., 2024, tau-bench)
is the chance that all k pass: `C(c, k) / C(n, k)`. Both are computed as running products,
never as binomials of large numbers, so they stay exact to floating point for any n."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from gradekit.core.values import ExactSum
from gradekit.report.text import percent, rate_with_interval

if TYPE_CHECKING:
    from gradekit.core.types import GradeResult

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_KS",
    "MAX_GROUP_ROWS",
    "AttemptTally",
    "CountedCase",
    "GroupCounts",
    "Interval",
    "PassAtK",
    "case_label",
    "check_confidence",
    "checked_ks",
    "clustered_interval",
    "clustered_se",
    "group_line",
    "junit_properties",
    "markdown_lines",
    "mean_over_tasks",
    "mean_shown",
    "pass_at_k",
    "pass_at_k_of",
    "pass_hat_k",
    "shown_ks",
    "summary_line",
    "wilson_interval",
    "z_value",
]


DEFAULT_CONFIDENCE: Final = 0.95
"""The level of every interval unless another is asked for (`--confidence C`)."""

Interval = tuple[float, float]
"""An interval `(low, high)`."""


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"passed attempts must be from 0 to n ({n}), got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be from 1 to the number of attempts ({n}), got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k of the n attempts passes, given c of n passed."""
    _check(n, c, k)
    if n - c < k:  # every draw of k holds a passing attempt
        return 1.0
    failing_only = 1.0
    for drawn in range(n - c + 1, n + 1):  # C(n-c, k) / C(n, k) as a product of k factors
        failing_only *= 1.0 - k / drawn
    return 1.0 - failing_only


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all of k of the n attempts pass, given c of n passed."""
    _check(n, c, k)
    if c < k:
        return 0.0
    all_pass = 1.0
    for i in range(k):
        all_pass *= (c - i) / (n - i)
    return all_pass


def mean_over_tasks(counts: Iterable[tuple[int, int]], ks: Sequence[int]) -> dict[str, float]:
    """The mean pass@k and pass^k for each k of `ks`, over the tasks (given as (n, c)) that
    have at least k attempts: `{"pass@1": ..., "pass^1": ..., ...}`; a k no task has at least
    k attempts for is left out (empty when there is no task)."""
    tasks = list(counts)
    means: dict[str, float] = {}
    for k in ks:
        counted = [(n, c) for n, c in tasks if n >= k]
        if not counted:
            continue
        means[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in counted) / len(counted)
        means[f"pass^{k}"] = sum(pass_hat_k(n, c, k) for n, c in counted) / len(counted)
    return means


def check_confidence(confidence: float) -> float:
    """`confidence` checked: a number strictly between 0 and 1 (ValueError otherwise)."""
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not 0.0 < confidence < 1.0
    ):
        raise ValueError(
            f"the confidence level must be a number between 0 and 1 (exclusive), got "
            f"{confidence!r}; write 0.95 for 95% intervals"
        )
    return float(confidence)


def z_value(confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The two-sided normal quantile of `confidence`: 1.959964... for 0.95."""
    from statistics import NormalDist  # imported when needed: it imports `random`, `decimal`

    return NormalDist().inv_cdf(1.0 - (1.0 - check_confidence(confidence)) / 2.0)


def _clip(low: float, high: float) -> Interval:
    return (min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0))


def wilson_interval(
    successes: float, n: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """The Wilson score interval of `successes` out of `n` (None when n is 0). `successes`
    may be a sum of scores in [0, 1] (a grader's mean score over results graded once)."""
    if n <= 0:
        return None
    z = z_value(confidence)
    z2 = z * z
    rate = successes / n
    denominator = 1.0 + z2 / n
    center = (rate + z2 / (2.0 * n)) / denominator
    half = z * math.sqrt(rate * (1.0 - rate) / n + z2 / (4.0 * n * n)) / denominator
    return _clip(center - half, center + half)


def clustered_se(clusters: Iterable[tuple[float, int]]) -> tuple[float, float, int] | None:
    """The mean and its clustered standard error over `clusters`, each given as (sum of its
    values, how many values): SE = sqrt(Σ_c (S_c - n_c · mean)²) / N, N = Σ n_c (no
    small-sample correction). Returns (mean, SE, N); None when there is no value."""
    listed = [(float(total), int(count)) for total, count in clusters if count > 0]
    n = sum(count for _, count in listed)
    if n == 0:
        return None
    mean = math.fsum(total for total, _ in listed) / n
    spread = math.fsum((total - count * mean) ** 2 for total, count in listed)
    return mean, math.sqrt(spread) / n, n


def clustered_interval(
    clusters: Iterable[tuple[float, int]], confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """The mean ± z · clustered SE over `clusters` (see `clustered_se`), clipped to [0, 1];
    None when there is no value."""
    found = clustered_se(clusters)
    if found is None:
        return None
    mean, se, _ = found
    half = z_value(confidence) * se
    return _clip(mean - half, mean + half)


DEFAULT_KS: Final = (1, 5, 10)
"""The k shown when none is asked for: those at most the largest n (plus that n)."""


class _CountedResult(Protocol):
    @property
    def result(self) -> GradeResult: ...


class _CountedTurn(Protocol):
    @property
    def results(self) -> Sequence[_CountedResult]: ...


class CountedCase(Protocol):
    """What the counts of a run read of a finished case: a `gradekit.report.model.CaseReport`,
    named by its shape because the model imports this module (and the summary's)."""

    @property
    def name(self) -> str:
        """The case's name."""

    @property
    def passed(self) -> bool:
        """Its verdict."""

    @property
    def errored(self) -> bool:
        """Whether a turn errored."""

    @property
    def error(self) -> str | None:
        """Why it could not be loaded, if it could not."""

    @property
    def attempt(self) -> int | None:
        """Its attempt index, for one of several attempts."""

    @property
    def turns(self) -> Sequence[_CountedTurn]:
        """Its turns, each with its results."""


def case_label(name: str, attempt: int | None) -> str:
    """How reports name a case: `name`, or `name [attempt i]` for one of several attempts."""
    return name if attempt is None else f"{name} [attempt {attempt}]"


def checked_ks(ks: Sequence[int] | None) -> tuple[int, ...] | None:
    """`ks` as a tuple, checked: whole numbers >= 1 (ValueError naming the wrong one)."""
    if ks is None:
        return None
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence) or not ks:
        raise ValueError(f"k must be a non-empty sequence of whole numbers >= 1, got {ks!r}")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"each k must be a whole number >= 1, got {k!r}")
    return tuple(ks)


def shown_ks(requested: Sequence[int] | None, largest: int) -> tuple[tuple[int, ...], list[str]]:
    """The k to show for groups of at most `largest` attempts, and the notes on the ones
    asked for that no group has enough attempts for."""
    if requested is None:
        return tuple(sorted({k for k in DEFAULT_KS if k <= largest} | {largest})), []
    shown = tuple(sorted({k for k in requested if k <= largest}))
    beyond = sorted({k for k in requested if k > largest})
    notes = [
        f"k={k} is larger than every case's number of attempts (at most {largest}): not shown"
        for k in beyond
    ]
    return shown, notes


@attrs.frozen
class GroupCounts:
    """One case group: its name and how many of its attempts passed, failed and errored."""

    name: str
    passed: int = 0
    failed: int = 0
    errored: int = 0

    @property
    def attempts(self) -> int:
        """n: every attempt graded (errored ones included)."""
        return self.passed + self.failed + self.errored

    def figures(self, ks: Iterable[int]) -> dict[str, float]:
        """`{"pass@1": ..., "pass^1": ...}` for each k of `ks` up to n; errored attempts count
        as not passed."""
        n = self.attempts
        figures: dict[str, float] = {}
        for k in ks:
            if k <= n:
                figures[f"pass@{k}"] = pass_at_k(n, self.passed, k)
                figures[f"pass^{k}"] = pass_hat_k(n, self.passed, k)
        return figures

    def to_dict(self, ks: Iterable[int]) -> dict[str, Any]:
        """The JSON form: a `case_groups` item of the JSON report (docs/reports.md)."""
        return {
            "name": self.name,
            "attempts": self.attempts,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "pass_at_k": self.figures(ks),
        }


@attrs.frozen
class PassAtK:
    """pass@k of a run: its case groups (by name), the k shown, and notes on k asked for that
    are larger than every group's n."""

    groups: tuple[GroupCounts, ...]
    ks: tuple[int, ...]
    notes: tuple[str, ...] = ()
    interval_level: float = DEFAULT_CONFIDENCE
    """The level of `mean_intervals`."""

    @classmethod
    def of(cls, groups: Iterable[GroupCounts], requested: Sequence[int] | None) -> PassAtK | None:
        """The figures of `groups` at the k `requested` (None: the default); None when there
        is no group (a run with no case of several attempts)."""
        found = tuple(sorted(groups, key=lambda group: group.name))
        if not found:
            return None
        ks, notes = shown_ks(requested, max(group.attempts for group in found))
        return cls(found, ks, tuple(notes))

    def means(self) -> dict[str, float]:
        """The mean pass@k and pass^k over the groups with at least k attempts, per k."""
        return mean_over_tasks(((g.attempts, g.passed) for g in self.groups), self.ks)

    def mean_intervals(self) -> dict[str, list[float]]:
        """The interval of each mean of `means` over at least two groups: the mean ± z times
        the standard error of the groups' figures (one value per group), within [0, 1]."""
        intervals: dict[str, list[float]] = {}
        for k in self.ks:
            counted = [g for g in self.groups if g.attempts >= k]
            if len(counted) < 2:
                continue
            for key, figure in (("pass@", pass_at_k), ("pass^", pass_hat_k)):
                values = ((figure(g.attempts, g.passed, k), 1) for g in counted)
                interval = clustered_interval(values, self.interval_level)
                if interval is not None:
                    intervals[f"{key}{k}"] = [interval[0], interval[1]]
        return intervals

    def counted(self, k: int) -> int:
        """How many groups have at least k attempts (the ones `means` averages at k)."""
        return sum(1 for group in self.groups if group.attempts >= k)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the report's `summary.pass_at_k` (docs/reports.md)."""
        return {
            "k": list(self.ks),
            "groups": len(self.groups),
            "attempts": sum(group.attempts for group in self.groups),
            "passed": sum(group.passed for group in self.groups),
            "failed": sum(group.failed for group in self.groups),
            "errored": sum(group.errored for group in self.groups),
            "mean": self.means(),
            "mean_interval": self.mean_intervals(),
            "groups_at_k": {str(k): self.counted(k) for k in self.ks},
            "notes": list(self.notes),
            "case_groups": [group.to_dict(self.ks) for group in self.groups],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PassAtK:
        """Rebuild from its JSON form (a JSON report's `summary.pass_at_k`)."""
        groups = data["case_groups"]
        return cls(
            tuple(GroupCounts(g["name"], g["passed"], g["failed"], g["errored"]) for g in groups),
            tuple(data["k"]),
            tuple(data.get("notes", ())),
            data.get("interval_level", DEFAULT_CONFIDENCE),
        )


class _Scores:
    """One grader's scores over the attempts of one case: their exact sum, how many, the
    exact sum of their squares."""

    __slots__ = ("count", "squares", "total")

    def __init__(self) -> None:
        self.total = ExactSum()
        self.count = 0
        self.squares = ExactSum()

    def add(self, score: float) -> None:
        self.total.add(score)
        self.count += 1
        self.squares.add(score * score)

    def merge(self, other: _Scores) -> None:
        self.total.merge(other.total)
        self.count += other.count
        self.squares.merge(other.squares)


class AttemptTally:
    """Counts attempts by case name as a run finishes them (cases of one attempt are not
    counted here); `result(ks)` is their `PassAtK`."""

    __slots__ = ("_counts", "_scores")

    def __init__(self) -> None:
        # name -> [passed, failed, errored]
        self._counts: dict[str, list[int]] = {}
        # name -> grader name -> (sum of scores, how many, sum of their squares), summed
        # exactly: a case's attempts may be counted in any order, by several tallies merged.
        self._scores: dict[str, dict[str, _Scores]] = {}

    def add(self, case: CountedCase) -> None:
        """Count `case` when it is one of several attempts."""
        if case.attempt is not None:
            self.count(case.name, case.passed, case.errored or case.error is not None)
            for turn in case.turns:
                self.score(case.name, [record.result for record in turn.results])

    def score(self, name: str, results: Iterable[GradeResult]) -> None:
        """Count the scores of `results` (one turn of an attempt of case `name`) under their
        grader's name, errored ones left out: each grader's mean score is clustered by case."""
        graders = self._scores.get(name)
        if graders is None:
            graders = self._scores[name] = {}
        for result in results:
            if result.error is None:
                sums = graders.get(result.name)
                if sums is None:
                    sums = graders[result.name] = _Scores()
                sums.add(result.score)

    def __len__(self) -> int:
        """How many cases of several attempts were counted."""
        return len(self._counts)

    def clusters(self, grader: str) -> list[tuple[float, int, float]]:
        """For each case of several attempts, `grader`'s (sum of scores, how many, sum of
        squares) over its attempts."""
        found = []
        for graders in self._scores.values():
            sums = graders.get(grader)
            if sums is not None:
                found.append((sums.total.value(), sums.count, sums.squares.value()))
        return found

    def count(self, name: str, passed: bool, errored: bool) -> None:
        """Count one attempt of case `name` by its verdict."""
        counts = self._counts.get(name)
        if counts is None:
            counts = self._counts[name] = [0, 0, 0]
        counts[2 if errored else 0 if passed else 1] += 1

    def merge(self, other: AttemptTally) -> None:
        """Count every attempt `other` counted."""
        for name, (passed, failed, errored) in other._counts.items():
            counts = self._counts.setdefault(name, [0, 0, 0])
            counts[0] += passed
            counts[1] += failed
            counts[2] += errored
        for name, graders in other._scores.items():
            mine = self._scores.setdefault(name, {})
            for grader, theirs in graders.items():
                mine.setdefault(grader, _Scores()).merge(theirs)

    def result(
        self, ks: Sequence[int] | None = None, confidence: float = DEFAULT_CONFIDENCE
    ) -> PassAtK | None:
        """The pass@k of what was counted, at `ks` (None: the default), its intervals at
        `confidence`."""
        groups = (GroupCounts(name, *counts) for name, counts in self._counts.items())
        found = PassAtK.of(groups, ks)
        if found is None or confidence == DEFAULT_CONFIDENCE:
            return found
        return attrs.evolve(found, interval_level=confidence)


def pass_at_k_of(cases: Iterable[CountedCase], ks: Sequence[int] | None = None) -> PassAtK | None:
    """The pass@k of case reports (a run read back with `read_run`, say), at `ks`."""
    tally = AttemptTally()
    for case in cases:
        tally.add(case)
    return tally.result(ks)


MAX_GROUP_ROWS = 50
"""At most this many case groups in the Markdown table; the rest are counted."""


def _counts(attempts: int, errored: int) -> str:
    return f"{attempts} attempt{'s' if attempts != 1 else ''}, {errored} errored"


def mean_shown(figures: PassAtK) -> Callable[[str], str]:
    """`shown(key)`: the mean of `key` (`pass@5`, `pass^5`) over the groups, with its
    interval when it has one (averaged over at least two groups): `60.0% (95% CI 41.0-79.0)`."""
    means = figures.means()
    intervals = figures.mean_intervals()
    level = figures.interval_level

    def shown(key: str) -> str:
        interval = intervals.get(key)
        return rate_with_interval(
            means[key], None if interval is None else (interval[0], interval[1]), level
        )

    return shown


def summary_line(figures: PassAtK) -> str:
    """`pass@k over 3 cases (25 attempts, 2 errored): pass@1 60.0% (95% CI 41.0-79.0) pass^1
    ... | pass@5 ...`, with the number of cases averaged at each k that not every case has
    attempts for."""
    groups = figures.groups
    mean_text = mean_shown(figures)
    parts = []
    for k in figures.ks:
        counted = figures.counted(k)
        over = "" if counted == len(groups) else f" ({counted} of the cases)"
        parts.append(f"pass@{k} {mean_text(f'pass@{k}')} pass^{k} {mean_text(f'pass^{k}')}{over}")
    attempts = sum(group.attempts for group in groups)
    errored = sum(group.errored for group in groups)
    noun = "case" if len(groups) == 1 else "cases"
    return (
        f"pass@k over {len(groups)} {noun} of several attempts ({_counts(attempts, errored)}): "
        + " | ".join(parts)
    )


def group_line(group: GroupCounts, figures: PassAtK) -> str:
    """One case group: `add: 10 attempts, 1 errored, 6 passed: pass@1 60.0% pass^1 60.0% ...`."""
    shown = group.figures(figures.ks)
    parts = [
        f"pass@{k} {percent(shown[f'pass@{k}'])} pass^{k} {percent(shown[f'pass^{k}'])}"
        for k in figures.ks
        if f"pass@{k}" in shown
    ]
    return f"{_counts(group.attempts, group.errored)}, {group.passed} passed: " + " | ".join(parts)


def markdown_lines(figures: PassAtK, cell: Callable[[str], str]) -> list[str]:
    """The Markdown section: the means per k, then a table of the case groups (`cell`
    escapes a name for a table cell), then the notes."""
    groups = figures.groups
    mean_text = mean_shown(figures)
    attempts = sum(group.attempts for group in groups)
    errored = sum(group.errored for group in groups)
    lines = [
        "### pass@k",
        "",
        f"{len(groups)} case{'s' if len(groups) != 1 else ''} of several attempts "
        f"({_counts(attempts, errored)}; an errored attempt counts as not passed).",
        "",
        "| k | pass@k | pass^k | Cases |",
        "| ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {k} | {mean_text(f'pass@{k}')} | {mean_text(f'pass^{k}')} | {figures.counted(k)} |"
        for k in figures.ks
    ]
    heads = "".join(f" pass@{k} | pass^{k} |" for k in figures.ks)
    lines += [
        "",
        f"| Case | Attempts | Passed | Errored |{heads}",
        "| --- | ---: | ---: | ---: |" + " ---: |" * (2 * len(figures.ks)),
    ]
    for number, group in enumerate(groups):
        if number == MAX_GROUP_ROWS:
            lines.append(f"| … and {len(groups) - number} more | | | |")
            break
        shown = group.figures(figures.ks)
        cells = "".join(
            f" {percent(shown.get(f'pass@{k}'))} | {percent(shown.get(f'pass^{k}'))} |"
            for k in figures.ks
        )
        lines.append(
            f"| {cell(group.name)} | {group.attempts} | {group.passed} | {group.errored} |{cells}"
        )
    lines += [f"\n> {note}" for note in figures.notes]
    return [*lines, ""]


def junit_properties(figures: PassAtK) -> list[tuple[str, str]]:
    """JUnit `<property>` names and values: `gradekit.pass@1` (the mean over the cases),
    `gradekit.pass^1`, ..., then `gradekit.case.NAME.pass@1` ... and the counts per case."""
    means = figures.means()
    found = [("gradekit.pass_at_k.cases", str(len(figures.groups)))]
    for k in figures.ks:
        found += [(f"gradekit.{key}", repr(means[key])) for key in (f"pass@{k}", f"pass^{k}")]
    for group in figures.groups:
        head = f"gradekit.case.{group.name}."
        found += [
            (head + "attempts", str(group.attempts)),
            (head + "passed", str(group.passed)),
            (head + "errored", str(group.errored)),
        ]
        found += [(head + key, repr(value)) for key, value in group.figures(figures.ks).items()]
    return found
