"""Each report format `gradekit run` writes, read back the way its consumer reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import DATA, Run
from lxml import etree


def _run_all(gradekit: Run, tmp_path: Path) -> None:
    done = gradekit(
        "run",
        "suite.yaml",
        "-o",
        "out/r.json",
        "--junit",
        "out/r.xml",
        "--markdown",
        "out/r.md",
        "--html",
        "out/r.html",
    )
    assert done.returncode == 1, done.stderr
    # Written atomically: no temporary file is left beside the reports.
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "r.html",
        "r.json",
        "r.md",
        "r.xml",
    ]


def test_json_report_has_the_design_fields(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    _run_all(gradekit, tmp_path)
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert report["suite"] == "mixed"
    assert report["passed"] is False
    assert report["complete"] is True
    assert report["summary"] == {
        "cases": 4,
        "passed": 2,
        "failed": 1,
        "errored": 1,
        "pass_rate": 2 / 4,  # passed / all cases: the errored case is not a pass
        # Wilson intervals (statsmodels' proportion_confint(method="wilson"), 6 digits)
        "pass_rate_interval": [
            pytest.approx(0.150039, abs=1e-6),
            pytest.approx(0.849961, abs=1e-6),
        ],
        "interval_level": 0.95,
        "graders": {
            "equality": {
                **{"passed": 2, "failed": 0, "errored": 0, "mean_score": 1.0},
                "mean_score_interval": [pytest.approx(0.34238, abs=1e-6), 1.0],
            },
            "explode": {
                **{"passed": 0, "failed": 0, "errored": 1, "mean_score": None},
                "mean_score_interval": None,
            },
            "numeric": {
                **{"passed": 1, "failed": 1, "errored": 0, "mean_score": 0.5},
                "mean_score_interval": [
                    pytest.approx(0.094531, abs=1e-6),
                    pytest.approx(0.905469, abs=1e-6),
                ],
            },
            "polite": {
                **{"passed": 0, "failed": 1, "errored": 0, "mean_score": 0.0},
                "mean_score_interval": [0.0, pytest.approx(0.793451, abs=1e-6)],
            },
        },
    }
    assert [case["name"] for case in report["cases"]] == ["good", "bad", "broken", "two-turns"]
    two = report["cases"][3]
    assert [turn["index"] for turn in two["turns"]] == [0, 1]
    polite = two["turns"][1]["results"][1]
    assert (polite["name"], polite["passed"], polite["advisory"]) == ("polite", False, True)
    assert set(polite) >= {
        "kind",
        "name",
        "passed",
        "score",
        "message",
        "details",
        "error",
        "advisory",
        "duration_ms",
    }
    broken = report["cases"][2]["turns"][0]["results"][0]
    assert broken["error"] == "ValueError: no luck"


def test_junit_is_valid_against_the_schema(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    _run_all(gradekit, tmp_path)
    schema = etree.XMLSchema(etree.parse(str(DATA / "junit.xsd")))
    document = etree.parse(str(tmp_path / "out" / "r.xml"))
    assert schema.validate(document), schema.error_log
    root = document.getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "mixed",
        "4",
        "1",
        "1",
    )
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert list(cases) == ["good", "bad", "broken", "two-turns"]
    assert len(cases["good"]) == 0 and len(cases["two-turns"]) == 0  # advisory fails don't count
    (failure, out) = cases["bad"]
    assert (failure.tag, out.tag) == ("failure", "system-out")
    assert failure.get("type") == "numeric"
    assert failure.get("message") == (
        "turn 0: numeric: expected '42', got '41' (off by 1; allowed 0.000001)"
    )
    (error, out) = cases["broken"]
    assert (error.tag, error.get("type")) == ("error", "ValueError")
    assert error.get("message") == "turn 0: explode: ValueError: no luck"
    # The sample the turn graded, then the results that did not pass.
    assert out.text == "turn 0:\n  output: x\n\nturn 0: explode error: ValueError: no luck"


def test_junit_skipped_turns(gradekit: Run, write, tmp_path: Path) -> None:
    """Turns after a fail_on_error grader's error are skipped. The case's testcase shows the
    error; each skipped turn is a testcase of its own with a `<skipped>` (a `<skipped>` in the
    case's testcase would make Jenkins show the case as skipped and hide the error)."""
    write("graders.py", "def explode(ctx):\n    raise ValueError('gone')\n")
    write(
        "suite.yaml",
        """
        name: skips
        cases:
          - name: stops-early
            turns:
              - output: a
                graders:
                  - {kind: code, grader: "graders:explode", fail_on_error: true}
              - output: b
                graders: [{kind: contains, values: [b]}]
        """,
    )
    done = gradekit("run", "suite.yaml", "--junit", "r.xml", "-o", "r.json")
    report = json.loads((tmp_path / "r.json").read_text())
    turns = report["cases"][0]["turns"]
    assert [turn.get("skipped", False) for turn in turns] == [False, True]
    assert done.returncode == 1
    schema = etree.XMLSchema(etree.parse(str(DATA / "junit.xsd")))
    document = etree.parse(str(tmp_path / "r.xml"))
    assert schema.validate(document), schema.error_log
    (suite,) = document.getroot()
    assert (suite.get("tests"), suite.get("errors"), suite.get("skipped")) == ("2", "1", "1")
    case, turn = document.getroot().iter("testcase")
    assert case.get("name") == "stops-early"
    assert [child.tag for child in case] == ["error", "system-out"]
    assert case[1].text.endswith("turn 1: skipped (an earlier error ended the case)")
    assert turn.get("name") == "stops-early [turn 1]"
    assert [child.tag for child in turn] == ["skipped"]


def test_markdown_summary(gradekit: Run, mixed_suite: Path, tmp_path: Path) -> None:
    _run_all(gradekit, tmp_path)
    text = (tmp_path / "out" / "r.md").read_text()
    assert text.startswith("## gradekit: mixed ❌ failed\n")
    assert "| 4 | 2 | 1 | 1 | 50.0% (95% CI 15.0-85.0) | 66.7% |" in text
    assert "| numeric | 1 | 1 | 0 | 50.0% | 0.500 (95% CI 0.095-0.905) |" in text
    assert text.endswith(
        "### Cases that did not pass\n\n"
        "<details><summary>❌ <b>bad</b>: failed</summary>\n\n"
        "- `turn 0: numeric failed: expected '42', got '41' (off by 1; allowed 0.000001)`\n\n"
        "**turn 0**\n\noutput:\n```text\n41\n```\n\nexpected:\n```text\n42\n```\n\n"
        "</details>\n\n"
        "<details><summary>⚠️ <b>broken</b>: errored</summary>\n\n"
        "- `turn 0: explode error: ValueError: no luck`\n\n"
        "**turn 0**\n\noutput:\n```text\nx\n```\n\n"
        "</details>\n"
    )


def test_reports_keep_suite_order_with_many_jobs(gradekit: Run, write, tmp_path: Path) -> None:
    write(
        "graders.py",
        "import time, random\n\ndef jitter(ctx):\n"
        "    time.sleep(random.random() / 50)\n    return True\n",
    )
    lines = [
        json.dumps(
            {
                "name": f"case-{i:03d}",
                "output": "x",
                "graders": [{"kind": "code", "grader": "graders:jitter"}],
            }
        )
        for i in range(60)
    ]
    write("d.jsonl", "\n".join(lines) + "\n")
    write("suite.yaml", "name: order\ndataset: d.jsonl\n")
    done = gradekit("run", "suite.yaml", "--jobs", "8", "-o", "r.json", "--junit", "r.xml")
    assert done.returncode == 0, done.stderr
    names = [case["name"] for case in json.loads((tmp_path / "r.json").read_text())["cases"]]
    assert names == [f"case-{i:03d}" for i in range(60)]
    xml = etree.parse(str(tmp_path / "r.xml"))
    assert [c.get("name") for c in xml.getroot().iter("testcase")] == names


def test_a_report_path_under_a_file_is_refused_before_grading(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    (tmp_path / "blocked").write_text("a file, not a folder")
    done = gradekit("run", "suite.yaml", "-o", "blocked/r.json", "--resume", "r.jsonl", "--quiet")
    assert done.returncode == 2
    assert done.stderr == (
        "gradekit: cannot write blocked/r.json: blocked is a file, not a folder; choose another "
        "path; nothing was graded\n"
    )
    assert not (tmp_path / "r.jsonl").exists()  # nothing was graded
