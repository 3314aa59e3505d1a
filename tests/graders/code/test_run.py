"""The `code` kind through the runner and the command line: errors, fail_on_error, reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradekit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "graders"


def run(folder: Path, text: str) -> dict[str, Any]:
    """Load and run the suite `text` written in `folder`; the JSON report as a dict."""
    path = folder / "suite.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    report = gradekit.run_suite(gradekit.load_suite(path))
    return json.loads(json.dumps(report.to_dict()))


def results(turn: dict[str, Any]) -> list[tuple[str, bool, float, str | None]]:
    return [(r["name"], r["passed"], r["score"], r["error"]) for r in turn["results"]]


THREE_TURNS = """\
name: fail-on-error
graders:
  - kind: code
    grader: "my_benchmarks:raises_on_second_turn"
    fail_on_error: {flag}
cases:
  - name: broken
    turns:
      - output: a
      - output: b
      - output: c
  - name: other
    graders:
      - kind: code
        grader: "my_benchmarks:returns_float"
    turns:
      - output: x
"""


def test_fail_on_error_skips_the_rest_of_that_case_only(tmp_path: Path) -> None:
    report = run(tmp_path, THREE_TURNS.format(flag="true"))
    broken, other = report["cases"]
    assert [t.get("skipped", False) for t in broken["turns"]] == [False, False, True]
    assert results(broken["turns"][0]) == [("raises_on_second_turn", True, 1.0, None)]
    assert results(broken["turns"][1]) == [
        ("raises_on_second_turn", False, 0.0, "ValueError: broken on turn 1")
    ]
    assert broken["turns"][2]["results"] == []
    assert (broken["passed"], broken["errored"]) == (False, True)
    assert [results(t) for t in other["turns"]] == [
        [("raises_on_second_turn", True, 1.0, None), ("returns_float", True, 0.75, None)]
    ]
    assert (other["passed"], other["errored"]) == (True, False)
    summary = report["summary"]
    assert (summary["passed"], summary["failed"], summary["errored"]) == (1, 0, 1)


def test_without_fail_on_error_later_turns_still_run(tmp_path: Path) -> None:
    report = run(tmp_path, THREE_TURNS.format(flag="false"))
    broken = report["cases"][0]
    assert [t.get("skipped", False) for t in broken["turns"]] == [False, False, False]
    assert results(broken["turns"][2]) == [("raises_on_second_turn", True, 1.0, None)]
    assert broken["errored"] is True


def test_an_error_touches_only_its_grader(tmp_path: Path) -> None:
    report = run(
        tmp_path,
        """\
        name: isolation
        cases:
          - name: one
            output: "25,587"
            expected: 25587
            graders:
              - kind: code
                grader: "my_benchmarks:raises_value_error"
              - kind: code
                grader: "my_benchmarks:returns_dict"
              - kind: code
                grader: "my_benchmarks:numeric_equal"
              - kind: code
                grader: "my_benchmarks:returns_grader_result"
        """,
    )
    [turn] = report["cases"][0]["turns"]
    assert results(turn) == [
        ("raises_value_error", False, 0.0, "ValueError: cannot grade turn 0"),
        (
            "returns_dict",
            False,
            0.0,
            "TypeError: grader 'my_benchmarks:returns_dict' returned a dict; return "
            "True/False, a number in [0, 1] or a gradekit.code.GraderResult",
        ),
        ("numeric_equal", True, 1.0, None),
        ("returns_grader_result", True, 0.6, None),
    ]
    assert turn["results"][3]["details"] == {"response": "25,587", "parts": [1, 2.5, None, True]}
    assert turn["results"][3]["message"] == "close enough"


def test_thresholds_through_the_suite(tmp_path: Path) -> None:
    report = run(
        tmp_path,
        """\
        name: thresholds
        cases:
          - name: one
            graders:
              - {kind: code, grader: "my_benchmarks:returns_float", name: t07, threshold: 0.7}
              - {kind: code, grader: "my_benchmarks:returns_float", name: t08, threshold: 0.8}
              - {kind: code, grader: "my_benchmarks:returns_float", name: none}
        """,
    )
    [turn] = report["cases"][0]["turns"]
    assert results(turn) == [
        ("t07", True, 0.75, None),
        ("t08", False, 0.75, None),
        ("none", True, 0.75, None),
    ]


def test_async_grader_through_the_runner(tmp_path: Path) -> None:
    report = run(
        tmp_path,
        """\
        name: async
        cases:
          - name: one
            output: "25587.0"
            expected: 25587
            graders:
              - {kind: code, grader: "my_benchmarks:async_numeric_equal"}
              - {kind: code, grader: "my_benchmarks:async_raises"}
        """,
    )
    [turn] = report["cases"][0]["turns"]
    assert results(turn) == [
        ("async_numeric_equal", True, 1.0, None),
        ("async_raises", False, 0.0, "ValueError: async failure"),
    ]
    assert turn["results"][0]["details"] == {"awaited": True}


def test_module_is_imported_once_across_a_whole_run(
    write_module: Callable[..., Path],
) -> None:
    folder = write_module(
        "run_counted_graders",
        """
        from pathlib import Path
        with open(Path(__file__).with_name("imports.log"), "a") as log:
            log.write("imported\\n")

        def check(ctx):
            return ctx.agent_response == "ok"
        """,
    )
    cases = "\n".join(f"  - name: c{i}\n    output: ok" for i in range(30))
    report = run(
        folder,
        "name: counted\ngraders:\n  - kind: code\n    grader: run_counted_graders:check\n"
        f"  - kind: code\n    grader: run_counted_graders:check\n    name: again\n"
        f"cases:\n{cases}\n",
    )
    assert report["summary"]["passed"] == 30
    assert (folder / "imports.log").read_text() == "imported\n"


def _gradekit_command() -> list[str]:
    found = shutil.which("gradekit", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "gradekit"]


def _run_cli(folder: Path) -> subprocess.CompletedProcess[str]:
    """`gradekit run suite.yaml -o report.json --quiet` in `folder`, fixtures importable."""
    return subprocess.run(
        [*_gradekit_command(), "run", "suite.yaml", "-o", "report.json", "--quiet"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(FIXTURES)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_end_to_end_numeric_and_code_on_one_turn(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """\
            name: e2e
            cases:
              - name: revenue
                turns:
                  - input: "What was the revenue?"
                    output: "25,587"
                    expected: 25587
                    graders:
                      - kind: numeric
                        accept_thousands_separators: true
                      - kind: code
                        grader: "my_benchmarks:numeric_equal"
                      - kind: code
                        grader: "my_benchmarks:returns_grader_result"
                        name: with_details
            """
        ),
        encoding="utf-8",
    )
    child = _run_cli(tmp_path)
    assert child.returncode == 0, child.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["passed"] is True
    [turn] = report["cases"][0]["turns"]
    assert results(turn) == [
        ("numeric", True, 1.0, None),
        ("numeric_equal", True, 1.0, None),
        ("with_details", True, 0.6, None),
    ]
    assert [r["kind"] for r in turn["results"]] == ["numeric", "code", "code"]
    assert turn["results"][2]["details"] == {"response": "25,587", "parts": [1, 2.5, None, True]}
    graders = report["summary"]["graders"]
    assert graders["numeric_equal"]["passed"] == 1
    assert graders["numeric"]["passed"] == 1


def test_cli_refuses_a_suite_with_a_bad_grader(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: bad\ncases:\n  - name: one\n    graders:\n      - kind: code\n"
        '        grader: "my_benchmarks:numeric_equl"\n',
        encoding="utf-8",
    )
    child = _run_cli(tmp_path)
    assert child.returncode == 2
    assert (
        "suite.yaml:6:17: cases[0].graders[0].grader: case 'one': cannot resolve grader "
        "'my_benchmarks:numeric_equl': module 'my_benchmarks' has no attribute 'numeric_equl'"
    ) in child.stderr
    assert not (tmp_path / "report.json").exists()


def test_process_isolation_imports_the_suites_module_in_the_child(
    write_module: Callable[..., Path],
) -> None:
    folder = write_module(
        "isolated_graders",
        """
        import os

        def pid(ctx):
            from gradekit.code import GraderResult
            return GraderResult(1.0, details={"pid": os.getpid()})
        """,
    )
    report = run(
        folder,
        """\
        name: isolated
        cases:
          - name: one
            graders:
              - kind: code
                grader: "isolated_graders:pid"
                isolation: process
                timeout: 60
        """,
    )
    [result] = report["cases"][0]["turns"][0]["results"]
    assert (result["name"], result["passed"], result["error"]) == ("pid", True, None)
    assert result["details"]["pid"] != os.getpid()


def test_timeouts_name_the_callable(tmp_path: Path) -> None:
    report = run(
        tmp_path,
        """\
        name: slow
        cases:
          - name: one
            graders:
              - {kind: code, grader: "my_benchmarks:sleeps", timeout: 0.2}
              - {kind: code, grader: "my_benchmarks:async_sleeps", timeout: 0.2}
              - {kind: code, grader: "my_benchmarks:returns_float"}
        """,
    )
    [turn] = report["cases"][0]["turns"]
    assert results(turn) == [
        ("sleeps", False, 0.0, "TimeoutError: grader 'sleeps' exceeded 0.2s"),
        ("async_sleeps", False, 0.0, "TimeoutError: grader 'async_sleeps' exceeded 0.2s"),
        ("returns_float", True, 0.75, None),
    ]
