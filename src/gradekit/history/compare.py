"""Comparing a run with its baseline: what regressed, what was fixed, how scores moved.

`compare(base, new)` matches cases by name and attempt index (and turns by index) between two
runs, each given as
a JSON report, a `--resume` log, a `SuiteReport` or case reports, and returns a `Comparison`:
newly failing, newly erroring and newly passing cases, cases failing now that errored before,
new and removed cases (`new`: not in the baseline, the mark `gradekit run --baseline`
gives them), the cases `unchanged` by `mark_of` (and how many of them are still
failing), score changes per grader beyond a tolerance, the pass-rate change, and the paired
`statistics` of the cases in both runs (`gradekit.history.statistics`: the change with its
interval, McNemar's exact test or the paired t-test, the verdict).
`Comparison.failures(rules)` says which of the rules a CI gate cares about were broken
(`gradekit compare` exits 1 on any).

The rules of `--fail-on` (`gradekit compare`, `gradekit run --baseline`): which changes
since a baseline make the exit code 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal

import attrs

from gradekit.core.errors import ConfigError
from gradekit.history.case_scores import (
    ReadWatch,
    Seen,
    SeenReader,
    paired_case_statistics,
    read_seen,
)
from gradekit.history.statistics import DEFAULT_ALPHA, PairedStatistics
from gradekit.report.attempts import DEFAULT_CONFIDENCE, case_label
from gradekit.report.environment import KindChange, kind_changes
from gradekit.report.reading import Run

__all__ = [
    "FAIL_ON_RULES",
    "CaseChange",
    "Comparison",
    "FailOn",
    "Mark",
    "ScoreChange",
    "compare",
    "mark_of",
    "parse_fail_on",
    "significant_regression",
]


FAIL_ON_RULES: Final = ("regressions", "new-errors", "score-drop", "significant-regression")
"""What `--fail-on` may name: `regressions` (passing before, failing or erroring now),
`new-errors` (erroring now, not before: new cases included), `score-drop:N` (a grader's score on
a turn fell by more than N), `significant-regression[:ALPHA]` (the paired test says the pass
rate fell, p < ALPHA, 0.05 by default)."""


@attrs.frozen
class FailOn:
    """The rules a comparison is judged by (see FAIL_ON_RULES)."""

    regressions: bool = True
    new_errors: bool = False
    score_drop: float | None = None
    significant_regression: float | None = None
    """The alpha of `significant-regression`; None when the rule is not asked for."""


def parse_fail_on(text: str) -> FailOn:
    """`regressions,new-errors,score-drop:0.1,significant-regression:0.01` to a FailOn; a
    ConfigError names a bad part."""
    regressions = new_errors = False
    score_drop: float | None = None
    alpha: float | None = None
    for part in (p.strip() for p in text.split(",")):
        name, _, value = part.partition(":")
        if name == "regressions" and not value:
            regressions = True
        elif name == "new-errors" and not value:
            new_errors = True
        elif name == "score-drop":
            try:
                score_drop = float(value)
            except ValueError:
                score_drop = -1.0
            if not 0.0 <= score_drop < 1.0:
                raise ConfigError(
                    f"--fail-on score-drop takes a number from 0 to 1, got {value!r}; "
                    "write score-drop:0.1"
                )
        elif name == "significant-regression":
            alpha = _alpha(value)
        else:
            raise ConfigError(
                f"--fail-on: unknown rule {part!r}; use regressions, new-errors, "
                "score-drop:N and significant-regression[:ALPHA], separated by commas"
            )
    return FailOn(regressions, new_errors, score_drop, alpha)


def _alpha(value: str) -> float:
    """The ALPHA of `significant-regression[:ALPHA]`: 0.05 when not given."""
    if not value:
        return DEFAULT_ALPHA
    try:
        alpha = float(value)
    except ValueError:
        alpha = -1.0
    if not 0.0 < alpha < 1.0:
        raise ConfigError(
            "--fail-on significant-regression takes a significance level between 0 and 1 "
            f"(exclusive), got {value!r}; write significant-regression:0.05"
        )
    return alpha


def significant_regression(statistics: PairedStatistics | None, alpha: float) -> str | None:
    """The sentence saying the pass rate fell significantly (p < `alpha`), else None: the
    rule `significant-regression` of `compare` and `run --baseline`."""
    if statistics is None or not statistics.significant_regression(alpha):
        return None
    assert statistics.pass_rate_change is not None and statistics.p_value is not None
    test = "McNemar" if statistics.test == "mcnemar-exact" else "paired t"
    return (
        f"the pass rate fell significantly: {statistics.pass_rate_change * 100:+.1f} points "
        f"over {statistics.paired} paired case(s), {test} p = {statistics.p_value:.3g} < "
        f"{alpha:g}"
    )


Outcome = Literal["pass", "fail", "error"]

Mark = Literal["new", "fixed", "regressed", "unchanged"]
"""How a case of a run compares with the same case (by name) in its baseline."""


def mark_of(was: Outcome | None, now: Outcome) -> Mark:
    """The one rule `compare` and `gradekit run --baseline` share: `new` (not in the baseline,
    `was` None), `regressed` (passing before, failing or erroring now), `fixed` (failing or
    erroring before, passing now), else `unchanged` (a failure that now errors, or an error
    that now fails, included)."""
    if was is None:
        return "new"
    if was == "pass":
        return "unchanged" if now == "pass" else "regressed"
    return "fixed" if now == "pass" else "unchanged"


@attrs.frozen
class CaseChange:
    """A case whose outcome differs between the runs; None stands for 'not in that run'.
    `attempt`: which of the case's attempts (None: a case of one attempt)."""

    name: str
    base: Outcome | None
    new: Outcome | None
    attempt: int | None = None

    @property
    def label(self) -> str:
        """The case as reports name it (`name [attempt i]` for an attempt)."""
        return case_label(self.name, self.attempt)


@attrs.frozen
class ScoreChange:
    """One grader's score on one turn of one case, in both runs."""

    case: str
    turn: int
    grader: str
    base: float
    new: float
    attempt: int | None = None

    @property
    def label(self) -> str:
        """The case as reports name it (`name [attempt i]` for an attempt)."""
        return case_label(self.case, self.attempt)

    @property
    def delta(self) -> float:
        """new - base: negative for a drop."""
        return self.new - self.base


@attrs.frozen
class Comparison:
    """What changed from `base` to `new` (see `compare`)."""

    regressed: tuple[CaseChange, ...]
    """Passing before, failing or erroring now."""
    new_errors: tuple[CaseChange, ...]
    """Erroring now and not before (new cases included)."""
    fixed: tuple[CaseChange, ...]
    """Passing now, not passing before (new passing cases are `new`, not fixed)."""
    new: tuple[CaseChange, ...]
    """Not in the baseline: marked `new`, as `gradekit run --baseline` marks them."""
    removed: tuple[CaseChange, ...]
    score_changes: tuple[ScoreChange, ...]
    """Per grader and turn, changes larger than the tolerance, largest drop first."""
    base_pass_rate: float | None
    new_pass_rate: float | None
    unchanged: int
    """Cases of both runs marked `unchanged` by `mark_of`: passing both times, or not passing
    both times (a failure that now errors, or an error that now fails, included), as
    `gradekit run --baseline` counts them; regressed + fixed + new + unchanged is the new
    run's cases."""
    kind_changes: tuple[KindChange, ...] = ()
    """Kinds both runs use whose distribution or version changed (a pack upgraded): a score
    change may come from them. Empty when either run records no environment."""
    still_failing: int = 0
    """Of the `unchanged` cases, those that did not pass either time."""
    now_failing: tuple[CaseChange, ...] = ()
    """Erroring before, failing now: `unchanged` (still failing), listed so that every case
    whose outcome changed is in a list (a failure that now errors is in `new_errors`)."""
    statistics: PairedStatistics | None = None
    """The paired statistics of the cases (by name) in both runs: the pass-rate change with
    its interval, the test's p-value and the verdict, and each grader's mean-score change."""

    @property
    def pass_rate_change(self) -> float | None:
        """new - base pass rate, or None when either run has no case."""
        if self.base_pass_rate is None or self.new_pass_rate is None:
            return None
        return self.new_pass_rate - self.base_pass_rate

    def failures(self, rules: FailOn) -> list[str]:
        """Which of `rules` the new run breaks, each as a short sentence (empty: none)."""
        broken = []
        if rules.regressions and self.regressed:
            broken.append(f"{len(self.regressed)} case(s) regressed")
        if rules.new_errors and self.new_errors:
            broken.append(f"{len(self.new_errors)} case(s) newly errored")
        if rules.score_drop is not None:
            limit = rules.score_drop
            drops = [c for c in self.score_changes if -c.delta > limit]
            if drops:
                broken.append(f"{len(drops)} score(s) dropped by more than {limit:g}")
        alpha = rules.significant_regression
        if alpha is not None:
            found = significant_regression(self.statistics, alpha)
            if found:
                broken.append(found)
        return broken

    def to_dict(self) -> dict[str, object]:
        """The JSON form written by `gradekit compare --json`."""

        def cases(changes: Iterable[CaseChange]) -> list[dict[str, object]]:
            return [_asdict(change) for change in changes]

        return {
            "base_pass_rate": self.base_pass_rate,
            "new_pass_rate": self.new_pass_rate,
            "pass_rate_change": self.pass_rate_change,
            "regressed": cases(self.regressed),
            "new_errors": cases(self.new_errors),
            "fixed": cases(self.fixed),
            "new": cases(self.new),
            "removed": cases(self.removed),
            "now_failing": cases(self.now_failing),
            "unchanged": self.unchanged,
            "still_failing": self.still_failing,
            "score_changes": [
                {**_asdict(change), "delta": change.delta} for change in self.score_changes
            ],
            "kind_changes": [attrs.asdict(change) for change in self.kind_changes],
            **({} if self.statistics is None else {"statistics": self.statistics.to_dict()}),
        }


def _asdict(change: CaseChange | ScoreChange) -> dict[str, object]:
    """The JSON form of a change; `attempt` only for an attempt of a case of several."""
    data = attrs.asdict(change)
    if data["attempt"] is None:
        del data["attempt"]
    return data


_Key = tuple[str, int | None]
"""A case of a run: its name and attempt index (None for a case of one attempt)."""


def _pass_rate(cases: Mapping[_Key, Seen]) -> float | None:
    if not cases:
        return None
    return sum(1 for case in cases.values() if case.outcome == "pass") / len(cases)


def _paired(old: Seen, new: Seen) -> Iterable[tuple[tuple[int, str], float, float]]:
    """Each (turn, grader) scored in both, with its score before and now, in `new`'s order."""
    if old.layout is new.layout:  # graded alike: the usual case, no lookup
        return zip(new.layout, old.values, new.values, strict=True)
    before = old.scores()
    return [
        (key, before[key], score)
        for key, score in zip(new.layout, new.values, strict=True)
        if key in before
    ]


def compare(
    base: Run,
    new: Run,
    *,
    tolerance: float = 0.0,
    watch: ReadWatch | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Comparison:
    """Compare two runs of a suite; score changes of at most `tolerance` are ignored.
    `watch`: the progress of reading each file; `confidence`: the level of the statistics'
    intervals (and 1 - `confidence`, the alpha of their verdict)."""
    layouts = SeenReader()  # one for both: their cases graded alike share a layout
    (before, base_environment), (after, new_environment) = (
        read_seen(base, watch, layouts),
        read_seen(new, watch, layouts),
    )
    regressed, new_errors, fixed, new_cases, removed, now_failing = [], [], [], [], [], []
    scores: list[ScoreChange] = []
    unchanged = still_failing = 0
    for key, case in after.items():
        name, attempt = key
        old = before.get(key)
        now = case.outcome
        if old is None:
            new_cases.append(CaseChange(name, None, now, attempt))
            if now == "error":
                new_errors.append(CaseChange(name, None, now, attempt))
            continue
        was = old.outcome
        mark = mark_of(was, now)
        if mark == "unchanged":
            unchanged += 1
            still_failing += now != "pass"
        if was != now:
            change = CaseChange(name, was, now, attempt)
            if mark == "regressed":
                regressed.append(change)
            if now == "error":
                new_errors.append(change)
            if mark == "fixed":
                fixed.append(change)
            if was == "error" and now == "fail":
                now_failing.append(change)
        for (turn, grader), previous, score in _paired(old, case):
            if abs(score - previous) > tolerance:
                scores.append(ScoreChange(name, turn, grader, previous, score, attempt))
    for key, case in before.items():
        if key not in after:
            removed.append(CaseChange(key[0], case.outcome, None, key[1]))
    scores.sort(key=lambda change: (change.delta, change.case, change.turn, change.grader))
    return Comparison(
        regressed=tuple(regressed),
        new_errors=tuple(new_errors),
        fixed=tuple(fixed),
        new=tuple(new_cases),
        removed=tuple(removed),
        score_changes=tuple(scores),
        base_pass_rate=_pass_rate(before),
        new_pass_rate=_pass_rate(after),
        unchanged=unchanged,
        kind_changes=tuple(kind_changes(base_environment, new_environment)),
        still_failing=still_failing,
        now_failing=tuple(now_failing),
        statistics=paired_case_statistics(before, after, confidence),
    )
