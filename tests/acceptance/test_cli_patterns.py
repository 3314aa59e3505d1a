"""A pattern that backtracks cannot hang `gradekit run` (issue 30): with Python's `re`, the
regex kind's `^(a+)+$` against 34 `a`s and a `b` ran for about an hour in C holding the GIL, so
neither the grader's 3 s timeout nor SIGTERM could act. Real runs of the command, real signals.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path

from processes import killed_at_the_end, start

Write = Callable[[str, str], Path]

# `regex` sees through the issue's (a+)+, not through (a|a)*: 2**40 ways to split 40 a's.
ISSUE = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"  # 34 a's and a b
ALMOST = "a" * 40 + "b"


def test_the_issues_pattern_is_graded_and_one_that_backtracks_is_an_error(
    write: Write, tmp_path: Path
) -> None:
    write(
        "suite.yaml",
        f"""
        name: patterns
        graders:
          - {{kind: regex, pattern: '^(a+)+$', timeout: 3}}
        cases:
          - {{name: issue, output: {ISSUE}}}
          - name: backtracks
            output: {ALMOST}
            graders: [{{kind: regex, name: nested, pattern: '^(a|a)*$'}}]
          - {{name: plain, output: aaa}}
        """,
    )
    process = start(tmp_path, "suite.yaml", "-o", "r.json")
    with killed_at_the_end(tmp_path / "no-pids", process):
        _, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    report = json.loads((tmp_path / "r.json").read_text())
    results = {
        (case["name"], result["name"]): result
        for case in report["cases"]
        for result in case["turns"][0]["results"]
    }
    issue = results["issue", "regex"]
    assert (issue["passed"], issue["error"]) == (False, None)  # a fail, graded at once
    assert issue["message"] == f"no match for /^(a+)+$/ in '{ISSUE}'"
    nested = results["backtracks", "nested"]
    assert nested["passed"] is False
    assert nested["error"].startswith(
        "PatternTimeoutError: pattern: the pattern '^(a|a)*$' did not finish matching within "
        "2s of CPU time"
    )
    assert results["plain", "regex"]["passed"] is True
    assert report["summary"]["errored"] == 1 and report["summary"]["failed"] == 1


def test_sigterm_during_a_backtracking_match_stops_the_run_with_its_reports(
    write: Write, tmp_path: Path
) -> None:
    cases = "\n".join(f"  - {{name: slow-{i}, output: {ALMOST}}}" for i in range(20))
    write(
        "suite.yaml",
        "name: slow\ngraders:\n  - {kind: regex, pattern: '^(a|a)*$', timeout: 600}\n"
        f"cases:\n{cases}\n",
    )
    process = start(tmp_path, "suite.yaml", "-o", "r.json", "--resume", "r.jsonl")
    with killed_at_the_end(tmp_path / "no-pids", process):
        time.sleep(1.5)  # loading done, the first match running
        process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        _, err = process.communicate(timeout=60)
        # Acted on within one match's time limit (2 s of CPU time; the machine may be shared).
        assert time.monotonic() - started < 20
    assert process.returncode == 143, err
    assert "Traceback" not in err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is False
    assert len(report["cases"]) < 20


STUCK_IN_C = """
import re

def stuck(ctx):
    # Python's re backtracks in C holding the GIL: no thread of this process can run.
    return re.fullmatch("(a|a)*", "a" * 40 + "b") is not None
"""


def test_a_grader_stuck_in_c_is_ended_at_its_timeout_and_signals_act_with_process_isolation(
    write: Write, tmp_path: Path
) -> None:
    write("graders.py", STUCK_IN_C)
    stuck = "[{kind: code, grader: 'graders:stuck', isolation: process, timeout: 2}]"
    write(
        "suite.yaml",
        f"name: stuck\nsandbox: none\ncases:\n  - {{name: stuck, output: x, graders: {stuck}}}\n",
    )
    process = start(tmp_path, "suite.yaml", "-o", "r.json")
    with killed_at_the_end(tmp_path / "no-pids", process):
        _, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    (result,) = json.loads((tmp_path / "r.json").read_text())["cases"][0]["turns"][0]["results"]
    assert result["error"] == "TimeoutError: grader 'stuck' exceeded 2s"

    write("suite.yaml", (tmp_path / "suite.yaml").read_text().replace("timeout: 2", "timeout: 600"))
    process = start(tmp_path, "suite.yaml", "-o", "r.json")
    with killed_at_the_end(tmp_path / "no-pids", process):
        time.sleep(2)  # the isolated grade running
        process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        _, err = process.communicate(timeout=60)
        assert time.monotonic() - started < 10
    assert process.returncode == 143, err
    assert json.loads((tmp_path / "r.json").read_text())["complete"] is False
