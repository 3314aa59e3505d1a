"""The rules of `--fail-on` (`gradekit compare`, `gradekit run --baseline`): which changes
since a baseline make the exit code 1."""

from __future__ import annotations

from typing import Final

import attrs

from gradekit.core.errors import ConfigError
from gradekit.history.statistics import DEFAULT_ALPHA, PairedStatistics

__all__ = ["FAIL_ON_RULES", "FailOn", "parse_fail_on", "significant_regression"]


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
