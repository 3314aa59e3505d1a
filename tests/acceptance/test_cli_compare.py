"""`gradekit compare BASE NEW`: real runs of a suite before and after a change, compared through
the command line and the API."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from cli_support import Run

import gradekit
from gradekit.history.compare import compare, parse_fail_on

BEFORE = """
name: drift
graders:
  - kind: equality
cases:
  - {name: stays, output: "a", expected: "a"}
  - {name: breaks, output: "b", expected: "b"}
  - {name: mends, output: "x", expected: "c"}
  - {name: leaves, output: "d", expected: "d"}
  - name: scored
    output: "the cat sat"
    expected: "x"
    graders: [{kind: contains, values: [cat, sat, mat], mode: all, advisory: true}]
"""

AFTER = """
name: drift
graders:
  - kind: equality
cases:
  - {name: stays, output: "a", expected: "a"}
  - {name: breaks, output: "B!", expected: "b"}
  - {name: mends, output: "c", expected: "c"}
  - {name: arrives, output: "e", expected: "e"}
  - name: scored
    output: "the cat"
    expected: "x"
    graders: [{kind: contains, values: [cat, sat, mat], mode: all, advisory: true}]
  - name: erring
    output: "f"
    graders: [{kind: code, grader: "boom:grade"}]
"""


@pytest.fixture
def runs(tmp_path: Path, gradekit: Run) -> tuple[Path, Path]:
    """A JSON report of the suite before the change and a results log of it after."""
    (tmp_path / "boom.py").write_text("def grade(ctx):\n    raise RuntimeError('no')\n")
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(BEFORE))
    done = gradekit("run", "suite.yaml", "-q", "-o", "base.json")
    assert done.returncode == 1, done.stderr
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(AFTER))
    done = gradekit("run", "suite.yaml", "-q", "--resume", "new.jsonl")
    assert done.returncode == 1, done.stderr
    return tmp_path / "base.json", tmp_path / "new.jsonl"


def test_compare_lists_what_changed_and_exits_1_on_a_regression(
    runs: tuple[Path, Path], gradekit: Run, tmp_path: Path
) -> None:
    done = gradekit("compare", "base.json", "new.jsonl", "--json", "c.json", "--markdown", "c.md")
    assert done.returncode == 1, done.stderr
    assert "breaks: pass -> fail" in done.stdout
    assert "mends: fail -> pass" in done.stdout
    assert "regressed" in done.stderr
    data = json.loads((tmp_path / "c.json").read_text())
    assert [c["name"] for c in data["regressed"]] == ["breaks"]
    assert [c["name"] for c in data["fixed"]] == ["mends"]
    # One word for a case not in the baseline, as `gradekit run --baseline` marks it: new.
    assert sorted(c["name"] for c in data["new"]) == ["arrives", "erring"]
    assert "added" not in data
    assert "New (not in the baseline): 2\n" in done.stdout
    assert "1 regressed, 1 fixed, 2 new, " in done.stdout
    assert [c["name"] for c in data["removed"]] == ["leaves"]
    assert [c["name"] for c in data["new_errors"]] == ["erring"]
    assert "| `breaks` | pass | fail |" in (tmp_path / "c.md").read_text()


def test_fail_on_chooses_what_counts(runs: tuple[Path, Path], gradekit: Run) -> None:
    # Scores fell twice: `breaks` (equality, 1 -> 0) and the advisory `contains` of `scored`
    # (2/3 -> 1/3, a drop of a third).
    assert gradekit("compare", "base.json", "new.jsonl", "--fail-on", "new-errors").returncode == 1
    drop = gradekit("compare", "base.json", "new.jsonl", "--fail-on", "score-drop:0.3")
    assert drop.returncode == 1 and "2 score(s) dropped by more than 0.3" in drop.stderr
    drop = gradekit("compare", "base.json", "new.jsonl", "--fail-on", "score-drop:0.5")
    assert drop.returncode == 1 and "1 score(s) dropped by more than 0.5" in drop.stderr
    assert gradekit("compare", "new.jsonl", "new.jsonl").returncode == 0
    fixed_only = gradekit("compare", "new.jsonl", "base.json", "--fail-on", "new-errors")
    assert fixed_only.returncode == 0, fixed_only.stderr


def test_bad_input_exits_2_naming_it(
    runs: tuple[Path, Path], gradekit: Run, tmp_path: Path
) -> None:
    (tmp_path / "junk.json").write_text('{"cases": [{"nope": 1}]}')
    assert gradekit("compare", "base.json", "missing.json").returncode == 2
    bad = gradekit("compare", "base.json", "junk.json")
    assert bad.returncode == 2 and "junk.json" in bad.stderr
    rule = gradekit("compare", "base.json", "new.jsonl", "--fail-on", "regresions")
    assert rule.returncode == 2 and "unknown rule 'regresions'" in rule.stderr


def test_the_api_compares_report_objects_and_files_alike(runs: tuple[Path, Path]) -> None:
    base, new = runs
    from_files = compare(base, new)
    loaded = gradekit.report.reading.read_run(new)
    from_objects = compare(gradekit.report.reading.read_run(base), loaded)
    assert from_files == from_objects
    assert from_files.failures(parse_fail_on("regressions")) == ["1 case(s) regressed"]
    assert [c.grader for c in compare(base, new, tolerance=0.5).score_changes] == ["equality"] * 2
    (change,) = [c for c in from_files.score_changes if c.case == "scored"]
    assert change.delta == pytest.approx(-1 / 3)
    assert from_files.base_pass_rate == pytest.approx(3 / 5)  # stays, breaks, leaves


SWAPS_BEFORE = """
name: swaps
graders:
  - kind: equality
cases:
  - {name: passes, output: "a", expected: "a"}
  - {name: still-bad, output: "x", expected: "y"}
  - {name: now-errs, output: "x", expected: "y"}
  - name: now-fails
    output: "f"
    graders: [{kind: code, grader: "boom:grade"}]
"""

SWAPS_AFTER = """
name: swaps
graders:
  - kind: equality
cases:
  - {name: passes, output: "a", expected: "a"}
  - {name: still-bad, output: "x", expected: "y"}
  - name: now-errs
    output: "x"
    graders: [{kind: code, grader: "boom:grade"}]
  - {name: now-fails, output: "x", expected: "y"}
"""


def test_a_case_between_fail_and_error_is_unchanged_still_failing_and_listed(
    gradekit: Run, tmp_path: Path
) -> None:
    # A failing case that now errors, and an erroring one that now fails: neither passed either
    # time, so both are `unchanged` and still failing, as `gradekit run --baseline` marks them;
    # neither is lost: the first newly errors, the second is listed as failing now.
    (tmp_path / "boom.py").write_text("def grade(ctx):\n    raise RuntimeError('no')\n")
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(SWAPS_BEFORE))
    assert gradekit("run", "suite.yaml", "-q", "-o", "base.json").returncode == 1
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(SWAPS_AFTER))
    baseline = gradekit("run", "suite.yaml", "--baseline", "base.json", "-o", "new.json")
    assert baseline.returncode == 1, baseline.stderr
    assert "0 regressed, 0 fixed, 0 new, 4 unchanged (3 still failing), 0 removed" in (
        baseline.stdout
    )

    done = gradekit(
        "compare", "base.json", "new.json", "--json", "c.json", "--markdown", "c.md",
        "--html", "c.html",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # nothing regressed
    out = done.stdout
    assert "no case changed outcome" not in out
    assert "0 regressed, 0 fixed, 0 new, 4 unchanged (3 still failing), 0 removed" in out
    assert "Newly erroring: 1\n  now-errs: fail -> error\n" in out
    assert "Failing now (erroring before): 1\n  now-fails: error -> fail\n" in out
    data = json.loads((tmp_path / "c.json").read_text())
    assert (data["unchanged"], data["still_failing"]) == (4, 3)
    assert [c["name"] for c in data["new_errors"]] == ["now-errs"]
    assert [(c["name"], c["base"], c["new"]) for c in data["now_failing"]] == [
        ("now-fails", "error", "fail")
    ]
    markdown = (tmp_path / "c.md").read_text()
    assert "4 unchanged (3 still failing)" in markdown
    assert "### Failing now (erroring before): 1" in markdown
    assert "| `now-fails` | error | fail |" in markdown
    page = (tmp_path / "c.html").read_text()
    assert '<div class="count" id="count-unchanged"><b>4</b> unchanged</div>' in page
    assert '<div class="count" id="count-still-failing"><b>3</b> still failing</div>' in page
    assert "now-fails" in page

    # Nothing changed at all: said so, with the same counts.
    same = gradekit("compare", "new.json", "new.json")
    assert same.returncode == 0, same.stderr
    assert "0 regressed, 0 fixed, 0 new, 4 unchanged (3 still failing), 0 removed" in same.stdout
    assert "no case changed outcome" in same.stdout


def test_compare_markdown_shows_names_exactly_and_control_characters_as_escapes(
    gradekit: Run, tmp_path: Path
) -> None:
    # A backtick became an apostrophe, and ESC vanished.
    case = 'name: "tick`x\\e|y"'
    (tmp_path / "a.yaml").write_text(
        f"graders: [{{kind: equality}}]\ncases: [{{{case}, output: '1', expected: '1'}}]\n"
    )
    (tmp_path / "b.yaml").write_text(
        f"graders: [{{kind: equality}}]\ncases: [{{{case}, output: '2', expected: '1'}}]\n"
    )
    assert gradekit("run", "a.yaml", "-o", "a.json").returncode == 0
    assert gradekit("run", "b.yaml", "-o", "b.json", "--markdown", "b.md").returncode == 1
    done = gradekit("compare", "a.json", "b.json", "--markdown", "c.md")
    assert done.returncode == 1, done.stderr
    markdown = (tmp_path / "c.md").read_text()
    assert "| `` tick`x\\x1b\\|y `` | pass | fail |" in markdown
    assert "\x1b" not in markdown and "\x1b" not in done.stdout
    assert "tick`x\\x1b|y: pass -> fail" in done.stdout
    against = gradekit("run", "b.yaml", "--baseline", "a.json")
    assert against.returncode == 1
    assert "regressed against a.json: tick`x\\x1b|y" in against.stderr
    assert "\x1b" not in against.stdout + against.stderr


def _dataset_run(tmp_path: Path, gradekit: Run, name: str, lines: list[dict]) -> None:
    (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / f"{name}.yaml").write_text(
        f"name: big\ngraders: [{{kind: equality}}]\ndataset: {name}.jsonl\n"
    )
    done = gradekit("run", f"{name}.yaml", "-q", "-o", f"{name}.json", "--html", f"{name}.html")
    assert done.returncode in (0, 1), done.stderr


def test_the_html_comparison_reads_like_the_run_report_in_chromium(
    tmp_path: Path, gradekit: Run
) -> None:
    from chromium import Browser, chromium, file_url

    chromium()
    kept = [{"name": f"k{i:04d}", "output": "a", "expected": "a"} for i in range(1200)]
    _dataset_run(tmp_path, gradekit, "base", kept)
    broken = [{**kept[0], "output": "b"}, *kept[1:]]
    added = [{"name": f"n{i:04d}", "output": "a", "expected": "a"} for i in range(1500)]
    _dataset_run(tmp_path, gradekit, "new", broken + added)
    done = gradekit("compare", "base.json", "new.json", "--html", "cmp.html")
    assert done.returncode == 1, done.stderr

    browser = Browser()
    try:
        browser.open(file_url(tmp_path / "base.html"))
        look = (
            "(() => { const s = e => getComputedStyle(document.querySelector(e));"
            " return [s('body').fontFamily, s('body').fontSize, s('th').backgroundColor,"
            " s('td').borderTopColor, s('h1').fontSize,"
            " s('.badge.fail, .badge.pass').borderRadius]; })()"
        )
        report_look = browser.evaluate(look)
        browser.open(file_url(tmp_path / "cmp.html"))
        assert browser.evaluate(look) == report_look  # the run report's style
        text = "(e => e.innerText.replace(/\\s+/g, ' ').trim())"
        summary = browser.evaluate(f"{text}(document.getElementById('summary'))")
        assert summary == (
            "100.0% → 99.9% pass rate 1 regressed 0 fixed 1,500 new 1,199 unchanged "
            "0 still failing 0 removed"
        )
        # Outcomes as the run report's badges, in its colours.
        badges = browser.evaluate(
            "Array.from(document.querySelectorAll('#section-regressed .badge'))"
            ".map(b => [b.textContent, getComputedStyle(b).backgroundColor])"
        )
        assert badges == [["pass", "rgb(26, 127, 55)"], ["fail", "rgb(207, 34, 46)"]]
        heading = "document.querySelector('#section-new').previousElementSibling.textContent"
        assert browser.evaluate(heading) == "New (not in the baseline): 1,500"
        verdict = browser.evaluate("document.querySelector('h1 .badge').textContent")
        assert verdict == "no significant change"
    finally:
        browser.close()
