"""`gradekit run --select / --rerun-failed` and the gates `--min-pass-rate / --max-errors`, run
as a CI job would run them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TAGGED = """
    name: tagged
    tags: [all]
    graders: [{kind: numeric}]
    cases:
      - {name: quick, output: "1", expected: 1, tags: [smoke]}
      - {name: quick-slow, output: "2", expected: 2, tags: [smoke, slow]}
      - {name: wrong, output: "3", expected: 4, tags: [smoke]}
      - name: broken
        output: "5"
        tags: [nightly]
        graders: [{kind: code, grader: "graders:explode"}]
      - {name: untagged-equal, output: "6", expected: 6, graders: [{kind: equality}]}
"""

GRADERS = """
    def explode(ctx):
        raise ValueError("no luck")
"""


@pytest.fixture
def tagged(write) -> Path:
    write("graders.py", GRADERS)
    return write("suite.yaml", TAGGED)


def graded(report: Path) -> dict[str, str]:
    """Case name -> outcome, from a JSON report."""
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    return {case["name"]: case_outcome(case) for case in cases}


def case_outcome(case: dict) -> str:
    if case["errored"] or case.get("error"):
        return "error"
    return "pass" if case["passed"] else "fail"


def test_select_picks_the_tagged_cases_and_reports_carry_the_tags(gradekit, tagged, tmp_path):
    done = gradekit("run", str(tagged), "--select", "tag:smoke and not tag:slow", "-o", "r.json")
    assert done.returncode == 1, done.stderr  # `wrong` fails
    assert graded(tmp_path / "r.json") == {"quick": "pass", "wrong": "fail"}
    cases = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["cases"]
    assert cases[0]["tags"] == ["all", "smoke"]


def test_select_by_grader_kind_and_with_filter(gradekit, tagged, tmp_path):
    done = gradekit(
        "run", str(tagged), "--select", "grader:equality or grader:code", "-o", "r.json"
    )
    assert graded(tmp_path / "r.json") == {"broken": "error", "untagged-equal": "pass"}
    assert done.returncode == 1
    both = gradekit(
        "run", str(tagged), "--select", "tag:smoke", "--filter", "quick*", "-o", "r.json"
    )
    assert both.returncode == 0, both.stderr
    assert graded(tmp_path / "r.json") == {"quick": "pass", "quick-slow": "pass"}


def test_a_selection_that_cannot_be_read_or_matches_nothing_exits_2(gradekit, tagged):
    bad = gradekit("run", str(tagged), "--select", "tag:smoke and (")
    assert bad.returncode == 2
    assert "--select: selection 'tag:smoke and ('" in bad.stderr
    assert "nothing was graded" in bad.stderr
    none = gradekit("run", str(tagged), "--select", "tag:missing")
    assert none.returncode == 2
    assert "no case of" in none.stderr and "--select 'tag:missing'" in none.stderr


def test_rerun_failed_grades_only_what_failed_or_errored(gradekit, tagged, tmp_path):
    first = gradekit("run", str(tagged), "-o", "first.json", "--resume", "log.jsonl")
    assert first.returncode == 1
    assert graded(tmp_path / "first.json")["wrong"] == "fail"
    # Fix the failing case; the rerun grades `wrong` and `broken` only.
    fixed = TAGGED.replace('output: "3"', 'output: "4"')
    (tmp_path / "suite.yaml").write_text(
        "\n".join(line[4:] for line in fixed.splitlines()), encoding="utf-8"
    )
    for source in ("first.json", "log.jsonl"):
        again = gradekit("run", "suite.yaml", "--rerun-failed", source, "-o", "again.json")
        assert again.returncode == 1  # `broken` still errors
        assert graded(tmp_path / "again.json") == {"wrong": "pass", "broken": "error"}
    narrowed = gradekit(
        "run", "suite.yaml", "--rerun-failed", "first.json", "--select", "tag:smoke", "-o", "n.json"
    )
    assert narrowed.returncode == 0, narrowed.stderr
    assert graded(tmp_path / "n.json") == {"wrong": "pass"}


def test_rerun_failed_of_an_unreadable_or_all_passing_report_exits_2(gradekit, tagged, tmp_path):
    (tmp_path / "junk.json").write_text("[1, 2]\n", encoding="utf-8")
    junk = gradekit("run", str(tagged), "--rerun-failed", "junk.json")
    assert junk.returncode == 2
    assert "--rerun-failed:" in junk.stderr
    passing = gradekit("run", str(tagged), "--filter", "quick", "-o", "ok.json")
    assert passing.returncode == 0
    rerun = gradekit("run", str(tagged), "--rerun-failed", "ok.json")
    assert rerun.returncode == 2
    assert "nothing to grade again" in rerun.stderr


@pytest.mark.parametrize(
    ("gates", "code", "said"),
    [
        # 3 of 5 pass (0.6), 1 errored.
        (["--min-pass-rate", "0.6"], 0, []),
        (
            ["--min-pass-rate", "0.61"],
            1,
            ["gate --min-pass-rate 0.61 failed: the pass rate is 0.6"],
        ),
        (["--max-errors", "1"], 0, []),
        (["--max-errors", "0"], 1, ["gate --max-errors 0 failed: 1 case errored"]),
        (
            ["--min-pass-rate", "0.9", "--max-errors", "0"],
            1,
            ["gate --min-pass-rate 0.9 failed", "gate --max-errors 0 failed"],
        ),
        (["--min-pass-rate", "0.5", "--max-errors", "1"], 0, []),
    ],
)
def test_gates_decide_the_exit_code(gradekit, tagged, gates, code, said):
    done = gradekit("run", str(tagged), "-q", *gates)
    assert done.returncode == code, done.stderr
    for text in said:
        assert text in done.stderr
    assert ("gate" in done.stderr) is bool(said)


@pytest.mark.parametrize("gate", [["--min-pass-rate", "1.5"], ["--max-errors", "-1"]])
def test_a_bad_gate_value_exits_2(gradekit, tagged, gate):
    done = gradekit("run", str(tagged), *gate)
    assert done.returncode == 2
    assert gate[0] in done.stderr
