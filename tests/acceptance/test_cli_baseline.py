"""`gradekit run --baseline BASE`: real runs of a suite before and after a change (an output
changed, a grader made stricter, a case removed, cases added), each case marked in the JSON,
JUnit, Markdown and console reports, and the exit codes with and without the gates."""

from __future__ import annotations

import json
from pathlib import Path

import junitparser
import pytest
from baseline_runs import MARKS, SUMMARY, change
from cli_support import DATA, Run
from lxml import etree

import gradekit


@pytest.fixture
def changed(tmp_path: Path, gradekit: Run) -> Path:
    """The suite's folder: `base.json` (and `base.jsonl`) of the run before the change, the
    suite file after it."""
    return change(tmp_path, gradekit)


def test_every_report_marks_each_case(changed: Path, gradekit: Run) -> None:
    done = gradekit(
        "run", "suite.yaml", "--baseline", "base.json", "-o", "new.json", "--junit", "new.xml",
        "--markdown", "new.md",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "gradekit: 2 cases regressed against base.json: breaks, stricter" in done.stderr
    report = json.loads((changed / "new.json").read_text())
    assert {case["name"]: case["baseline"] for case in report["cases"]} == MARKS
    assert report["summary"]["baseline"] == SUMMARY

    # The console: the counts, the regressed cases by name, each failing case's mark.
    out = done.stdout
    assert (
        "compared with base.json: 2 regressed, 1 fixed, 2 new, 2 unchanged "
        "(1 still failing), 1 removed"
    ) in out
    regressed = out.index("regressed (2):\n  breaks\n  stricter\n")
    assert regressed < out.index("fixed (1):\n  mends\n") < out.index("removed (1):\n  leaves\n")
    assert "FAIL   breaks  (regressed)" in out and "ERROR  erring  (new)" in out
    assert "FAIL   still-bad\n" in out  # unchanged: no mark

    # Markdown: the section comes before the failing cases, the regressed cases first.
    markdown = (changed / "new.md").read_text()
    section = markdown.index("### Compared with the baseline base.json")
    assert "| 2 | 1 | 2 | 2 | 1 | 1 |" in markdown
    assert section < markdown.index("**Regressed (2)**: passing in the baseline, not now")
    assert markdown.index("- breaks\n- stricter") < markdown.index("**Fixed (1)**")
    assert markdown.index("**Removed (1)**") < markdown.index("### Cases that did not pass")
    assert "<b>breaks</b>: failed (regressed)</summary>" in markdown

    # JUnit: the marks as testsuite properties (Jenkins' schema allows none on a testcase),
    # valid for both schemas; a regressed case says so first in its system-out.
    document = etree.parse(str(changed / "new.xml"))
    for schema in ("jenkins-junit.xsd", "junit.xsd"):
        rules = etree.XMLSchema(etree.parse(str(DATA / schema)))
        assert rules.validate(document), rules.error_log
    (suite,) = list(junitparser.JUnitXml.fromfile(str(changed / "new.xml")))
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["gradekit.baseline"] == "base.json"
    assert properties["gradekit.baseline.regressed"] == "2"
    assert properties["gradekit.baseline.removed"] == "1"
    named = {k.split(":", 1)[1]: v for k, v in properties.items() if ":" in k}
    assert named == {name: mark for name, mark in MARKS.items() if mark != "unchanged"}
    cases = {case.name: case for case in suite}
    assert cases["breaks"].system_out.startswith("baseline: regressed\n")
    assert cases["still-bad"].system_out.startswith("baseline: unchanged\n")


def test_a_regression_fails_the_run_even_when_the_gates_pass(changed: Path, gradekit: Run) -> None:
    # Without the baseline the gate alone passes (3 of 7 cases pass)...
    alone = gradekit("run", "suite.yaml", "-q", "--min-pass-rate", "0.4")
    assert alone.returncode == 0, alone.stderr
    # ...with it, the two regressions fail the run; from a results log the same.
    for base in ("base.json", "base.jsonl"):
        gated = gradekit("run", "suite.yaml", "-q", "--min-pass-rate", "0.4", "--baseline", base)
        assert gated.returncode == 1, gated.stderr
        assert f"2 cases regressed against {base}: breaks, stricter" in gated.stderr
    # Against a run of itself nothing regressed: the gate decides again.
    assert gradekit("run", "suite.yaml", "-q", "-o", "now.json").returncode == 1
    same = gradekit("run", "suite.yaml", "-q", "--min-pass-rate", "0.4", "--baseline", "now.json")
    assert same.returncode == 0, same.stderr
    assert "regressed" not in same.stderr
    strict = gradekit("run", "suite.yaml", "-q", "--min-pass-rate", "0.5", "--baseline", "now.json")
    assert strict.returncode == 1 and "gate --min-pass-rate 0.5 failed" in strict.stderr
    # Without a gate, any case not passing fails the run, as without a baseline.
    assert gradekit("run", "suite.yaml", "-q", "--baseline", "now.json").returncode == 1


def test_a_baseline_that_cannot_be_read_exits_2_before_grading(
    changed: Path, gradekit: Run
) -> None:
    (changed / "junk.json").write_text('{"cases": [{"nope": 1}]}')
    for base, said in (("missing.json", "cannot read missing.json"), ("junk.json", "junk.json")):
        done = gradekit("run", "suite.yaml", "--baseline", base, "-o", "new.json")
        assert done.returncode == 2, done.stderr
        assert said in done.stderr
        assert not (changed / "new.json").exists()


def test_run_suite_takes_a_path_or_a_report_as_its_baseline(changed: Path) -> None:
    suite = gradekit.load_suite(changed / "suite.yaml")
    from_path = gradekit.run_suite(
        suite, statistics=gradekit.Statistics(baseline=changed / "base.json")
    )
    assert from_path.baseline is not None
    assert {case.name: from_path.baseline.mark(case) for case in from_path.cases} == MARKS
    assert from_path.baseline.to_dict() == {**SUMMARY, "report": str(changed / "base.json")}
    assert from_path.baseline.names["regressed"] == ("breaks", "stricter")
    assert from_path.baseline.removed_names == ("leaves",)
    data = from_path.to_dict()
    assert [case["baseline"] for case in data["cases"]] == list(MARKS.values())
    # A report object as the baseline: the same marks; no case kept, still counted.
    before = gradekit.report.reading.read_run(changed / "base.jsonl")
    from_cases = gradekit.run_suite(
        suite,
        outputs=gradekit.Outputs(keep_cases=False),
        statistics=gradekit.Statistics(baseline=before),
    )
    assert from_cases.baseline is not None
    assert from_cases.baseline.counts == from_path.baseline.counts
    assert gradekit.run_suite(suite).baseline is None


SLOW_FIRST = """
name: order
graders:
  - kind: code
    grader: "slow_first_graders:grade"
cases:
  - {name: c0, output: "x", expected: "x", delay: 0.8}
  - {name: c1, output: "x", expected: "x"}
  - {name: c2, output: "x", expected: "x"}
  - {name: c3, output: "x", expected: "x"}
  - {name: c4, output: "x", expected: "x"}
"""

WAITS = """
import os
import time


def grade(ctx):
    time.sleep(ctx.turn_config.get("delay", 0))
    return os.environ.get("AFTER") is None
"""
"""c0 waits 0.8 s; every case passes, unless the variable AFTER is set (the change)."""


@pytest.fixture
def slow_first(tmp_path: Path, gradekit: Run) -> Path:
    """A suite whose first case ends last under 4 jobs, and `base.json`: its run before the
    change, every case passing."""
    (tmp_path / "slow_first_graders.py").write_text(WAITS)
    (tmp_path / "suite.yaml").write_text(SLOW_FIRST)
    done = gradekit("run", "suite.yaml", "-q", "-o", "base.json")
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_the_regressed_cases_are_named_in_suite_order_though_the_first_ends_last(
    slow_first: Path, gradekit: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AFTER", "1")
    done = gradekit(
        "run", "suite.yaml", "--jobs", "4", "--baseline", "base.json", "-o", "new.json",
        "--markdown", "new.md",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "5 cases regressed against base.json: c0, c1, c2, c3, c4" in done.stderr
    assert "regressed (5):\n  c0\n  c1\n  c2\n  c3\n  c4\n" in done.stdout
    assert "- c0\n- c1\n- c2\n- c3\n- c4\n" in (slow_first / "new.md").read_text()


def test_run_suite_names_the_regressed_cases_in_suite_order(
    slow_first: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AFTER", "1")
    suite = gradekit.load_suite(slow_first / "suite.yaml")
    for keep_cases in (True, False):
        report = gradekit.run_suite(
            suite,
            jobs=4,
            outputs=gradekit.Outputs(keep_cases=keep_cases),
            statistics=gradekit.Statistics(baseline=slow_first / "base.json"),
        )
        assert report.baseline is not None
        assert report.baseline.names["regressed"] == ("c0", "c1", "c2", "c3", "c4")
