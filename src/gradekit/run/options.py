"""The options of `run_suite` beyond the common ones, in three small groups: `GraderDefaults`
(how entries that set none are graded: timeout, isolation, memory limit, sandbox), `Outputs`
(what the report keeps of each case, and a stream that writes the cases as they end) and
`Statistics` (what the summary measures besides its counts: the baseline run compared with,
the k of pass@k, the level of the intervals).

Each checks its values when it is made (ValueError, or ConfigError for a timeout, naming what
to give), so a wrong option fails at the call, before anything is read or graded. Imports the
core modules and the checks of `gradekit.report` (`checked_ks`, `check_confidence`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import attrs

from gradekit.core.values import seconds
from gradekit.process.bubblewrap import check_mode
from gradekit.report.attempts import checked_ks
from gradekit.report.estimators import DEFAULT_CONFIDENCE, check_confidence

if TYPE_CHECKING:
    from gradekit.history.baseline import Baseline
    from gradekit.report.model import CaseReport
    from gradekit.report.reading import Run
    from gradekit.run.stream import CaseStream

__all__ = ["GraderDefaults", "Outputs", "Statistics"]


def _timeout(value: float | None) -> float | None:
    return None if value is None else seconds(value)


def _isolation(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in (None, "thread", "process"):
        raise ValueError(f"isolation must be 'thread' or 'process', got {value!r}")


def _memory_limit(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"memory_limit_mb must be > 0, got {value!r}")


def _sandbox(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    wrong = check_mode(value)
    if wrong is not None:
        raise ValueError(f"sandbox: {wrong}")


def _max_text(_: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_text must be a whole number of bytes >= 1, got {value!r}")


@attrs.frozen
class GraderDefaults:
    """How the run grades the entries that do not say: `run_suite(suite,
    defaults=GraderDefaults(timeout=10, isolation="process"))`. An entry's own value wins.

    `timeout`: seconds (default: the suite's `timeout:`, else 60). `isolation`: `"thread"` (the
    default) or `"process"`. `memory_limit_mb`: the address-space limit of each child process
    under process isolation (default: none). `sandbox`: `"auto"`, `"bwrap"` or `"none"`, for
    agent code (default: the suite's `sandbox:`, else auto); `"bwrap"` where bubblewrap cannot
    run makes `run_suite` raise SandboxError before anything is graded.
    """

    timeout: float | None = attrs.field(default=None, converter=_timeout)
    isolation: Literal["thread", "process"] | None = attrs.field(default=None, validator=_isolation)
    memory_limit_mb: int | None = attrs.field(default=None, validator=_memory_limit)
    sandbox: str | None = attrs.field(default=None, validator=_sandbox)


@attrs.frozen
class Outputs:
    """What the report keeps of each case: `run_suite(suite, outputs=Outputs(keep_cases=False))`.

    `keep_cases`: which cases `report.cases` holds: True every one, False none (the summary is
    still exact: for runs too large to hold), or a function of a case report
    (`lambda c: c.outcome != "pass"`). `samples`: each turn's report carries the sample it
    graded (input, output, expected, tool calls, a transcript's messages) and each case's its
    metadata, each text cut at `max_text` bytes with a marker saying how much was cut; False:
    the verdicts alone. `stream`: a `gradekit.run.stream.CaseStream` that writes each case
    into a JSON report as it ends, in suite order, with no results log (what `gradekit run`
    does without `--resume`); not with `resume=`.
    """

    keep_cases: bool | Callable[[CaseReport], bool] = True
    samples: bool = True
    max_text: int = attrs.field(default=4096, validator=_max_text)
    stream: CaseStream | None = None


@attrs.frozen
class Statistics:
    """What the summary measures besides its counts: `run_suite(suite,
    statistics=Statistics(baseline="last.json", confidence=0.9))`.

    `baseline`: a run to compare with (the path of a JSON report or a results log, a
    `SuiteReport`, case reports, or a `Baseline`; an unreadable one makes `run_suite` raise
    ConfigError before anything is graded): `report.baseline` marks each case new, fixed,
    regressed or unchanged against the baseline's case of the same name, with their paired
    statistics. `k`: the k at which the summary gives pass@k and pass^k of cases with several
    attempts (default: 1, 5 and 10 up to the most attempts a case has, and that number), each
    a whole number >= 1. `confidence`: the level of every interval of the summary and of the
    baseline's statistics, between 0 and 1 exclusive.
    """

    baseline: Run | Baseline | None = None
    k: tuple[int, ...] | None = attrs.field(default=None, converter=checked_ks)
    confidence: float = attrs.field(default=DEFAULT_CONFIDENCE, converter=check_confidence)
