"""`gradekit run / validate / kinds / schema`: exit codes and messages, as a user sees them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from cli_support import REPO, Run

Write = Callable[[str, str], Path]

TYPO_SUITE = """
    name: typo
    cases:
      - name: growth
        output: "14%"
        expected: 0.14
        graders:
          - kind: numeric
            absolute_tolerence: 0.01
          - kind: numerik
"""

TYPO_LINES = [
    "invalid suite file suite.yaml (2 problems)",
    "suite.yaml:8:9: cases[0].graders[0]: unknown option 'absolute_tolerence' "
    "for kind 'numeric' (did you mean 'absolute_tolerance'?)",
    "suite.yaml:9:15: cases[0].graders[1].kind: unknown grader kind 'numerik'; "
    "did you mean 'numeric'?",
]


def test_quickstart_example_passes(gradekit: Run, tmp_path: Path) -> None:
    suite = REPO / "examples" / "quickstart" / "suite.yaml"
    done = gradekit("run", str(suite), "-o", "reports/quickstart.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "reports" / "quickstart.json").read_text())
    assert report["passed"] is True
    assert report["summary"]["cases"] == 304
    assert report["summary"]["graders"]["shows-working"]["failed"] == 1  # advisory only


def test_run_all_passed_exits_0(gradekit: Run, write: Write) -> None:
    write(
        "suite.yaml",
        "name: ok\ncases:\n  - {name: a, output: '1', expected: 1, graders: [{kind: numeric}]}\n",
    )
    done = gradekit("run", "suite.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "gradekit: ok: 1 cases: 1 passed, 0 failed, 0 errored "
        "(100.0% pass rate, 95% CI 20.7-100.0) in " + done.stderr.split(" in ")[1]
    )


def test_run_failed_and_errored_exits_1_and_lists_why(gradekit: Run, mixed_suite: Path) -> None:
    done = gradekit("run", "suite.yaml")
    assert done.returncode == 1
    assert done.stderr.startswith(
        "gradekit: mixed: 4 cases: 2 passed, 1 failed, 1 errored "
        "(50.0% pass rate, 95% CI 15.0-85.0; 66.7% of the graded cases) in "
    )
    tail = done.stdout.split("cases that did not pass (2):\n")[1]
    assert tail == (
        "  FAIL   bad\n"
        "         turn 0: numeric failed: expected '42', got '41' (off by 1; allowed 0.000001)\n"
        "  ERROR  broken\n"
        "         turn 0: explode error: ValueError: no luck\n"
    )
    # The per-grader table (plain text on a pipe): name, passed, failed, errored, pass rate,
    # mean score (its interval beside it, when there is one).
    lines = done.stdout.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("grader "))) + 2
    rows = {}
    for line in lines[first:]:
        if not line.strip():
            break
        name, *cells = line.split("(95% CI")[0].split()
        rows[name] = cells
    assert rows["numeric"] == ["1", "1", "0", "50.0%", "0.500"]
    assert rows["explode"] == ["0", "0", "1", "0.0%", "-"]  # an error is not a pass
    assert rows["polite"] == ["0", "1", "0", "0.0%", "0.000"]  # advisory, still reported


def test_only_errored_cases_still_exit_1(gradekit: Run, write: Write) -> None:
    write("graders.py", "def explode(ctx):\n    raise RuntimeError('down')\n")
    write(
        "suite.yaml",
        "name: e\ncases:\n  - {name: a, output: x, "
        "graders: [{kind: code, grader: 'graders:explode'}]}\n",
    )
    done = gradekit("run", "suite.yaml", "--quiet")
    assert done.returncode == 1
    assert (done.stdout, done.stderr) == ("", "")


def test_invalid_suite_exits_2_with_every_problem_placed(gradekit: Run, write: Write) -> None:
    write("suite.yaml", TYPO_SUITE)
    for command in ("run", "validate"):
        done = (
            gradekit(command, "suite.yaml", "-o", "report.json")
            if command == "run"
            else (gradekit(command, "suite.yaml"))
        )
        assert done.returncode == 2
        assert done.stderr.splitlines() == TYPO_LINES
        assert done.stdout == ""
    assert not (Path(write("x", "").parent) / "report.json").exists()  # nothing graded


def test_yaml_syntax_error_has_file_line_column(gradekit: Run, write: Write) -> None:
    write("suite.yaml", "name: x\ncases: [\n")
    done = gradekit("run", "suite.yaml")
    assert done.returncode == 2
    # libyaml's C parser (used where pyyaml has it) and the pure-Python one word it apart.
    problem = (
        "did not find expected node content"
        if yaml.__with_libyaml__
        else "expected the node content, but found '<stream end>'"
    )
    assert done.stderr.splitlines() == [
        "invalid suite file suite.yaml",
        f"suite.yaml:3:1: invalid YAML: {problem} (while parsing a flow node at line 3, "
        "column 1); fix the YAML syntax",
    ]


def test_missing_suite_file_exits_2(gradekit: Run) -> None:
    done = gradekit("run", "nowhere.yaml")
    assert done.returncode == 2
    assert done.stderr == "suite file nowhere.yaml does not exist; check the path\n"


def test_malformed_dataset_line_is_an_errored_case(gradekit: Run, write: Write) -> None:
    write("suite.yaml", "name: ds\ngraders: [{kind: equality}]\ndataset: d.jsonl\n")
    write(
        "d.jsonl",
        '{"name": "a", "output": "x", "expected": "x"}\n'
        '{"name": broken\n'
        '{"name": "c", "output": "y", "expected": "y"}\n',
    )
    done = gradekit("run", "suite.yaml", "-o", "report.json")
    assert done.returncode == 1
    assert "d.jsonl:2: invalid JSON: Expecting value (column 10); fix this line" in done.stdout
    report = json.loads((Path(write("x", "").parent) / "report.json").read_text())
    assert [(c["name"], c["passed"], c["errored"]) for c in report["cases"]] == [
        ("a", True, False),
        ("d.jsonl:2", False, True),
        ("c", True, False),
    ]
    assert report["cases"][1]["error"] == (
        "d.jsonl:2: invalid JSON: Expecting value (column 10); fix this line"
    )
    assert report["summary"]["errored"] == 1
    done = gradekit("validate", "suite.yaml")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "d.jsonl:2: invalid JSON: Expecting value (column 10); fix this line",
        "suite.yaml: 1 problem; nothing was graded",
    ]


def test_validate_good_suite(gradekit: Run) -> None:
    suite = REPO / "examples" / "quickstart" / "suite.yaml"
    done = gradekit("validate", str(suite))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{suite}: valid: suite 'quickstart', 304 cases\n"


def test_command_line_errors_exit_2(gradekit: Run, mixed_suite: Path) -> None:
    cases = [
        ((), "the following arguments are required: COMMAND"),
        (("grade",), "argument COMMAND: invalid choice: 'grade'"),
        (("run",), "the following arguments are required: SUITE"),
        (("run", "suite.yaml", "--jobs", "0"), "argument --jobs: must be at least 1, got 0"),
        (("run", "suite.yaml", "--timeout", "-1"), "expected a finite number of seconds > 0"),
        (("run", "suite.yaml", "--isolation", "vm"), "argument --isolation: invalid choice"),
        (("run", "suite.yaml", "--colour"), "unrecognized arguments: --colour"),
    ]
    for args, message in cases:
        done = gradekit(*args)
        assert done.returncode == 2, args
        assert message in done.stderr, (args, done.stderr)


def test_check_pack_of_a_distribution_that_is_not_installed_exits_2(gradekit: Run) -> None:
    done = gradekit("check-pack", "acme-graders")
    assert done.returncode == 2
    assert done.stderr.startswith("gradekit: distribution 'acme-graders' is not installed; ")


def test_filter_grades_only_matching_cases(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    done = gradekit("run", "suite.yaml", "--filter", "g*", "--filter", "two-*", "-o", "r.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [case["name"] for case in report["cases"]] == ["good", "two-turns"]
    done = gradekit("run", "suite.yaml", "--filter", "nothing-*")
    assert done.returncode == 2
    assert done.stderr == (
        "gradekit: no case of suite.yaml matches --filter 'nothing-*'; nothing was graded: "
        "check the pattern (a glob such as 'growth-*')\n"
    )


def test_timeout_flag_applies_to_graders(gradekit: Run, write: Write) -> None:
    write("graders.py", "import time\n\ndef slow(ctx):\n    time.sleep(5)\n    return True\n")
    write(
        "suite.yaml",
        "name: t\ncases:\n  - {name: a, output: x, "
        "graders: [{kind: code, grader: 'graders:slow'}]}\n",
    )
    done = gradekit("run", "suite.yaml", "--timeout", "0.3", "--quiet", "-o", "r.json")
    assert done.returncode == 1
    report = json.loads((Path(write("x", "").parent) / "r.json").read_text())
    result = report["cases"][0]["turns"][0]["results"][0]
    assert result["error"].startswith("TimeoutError")


def test_memory_limit_flag_limits_process_isolated_graders(gradekit: Run, write: Write) -> None:
    write(
        "graders.py",
        "def hog(ctx):\n    blocks = []\n    while True:\n"
        "        blocks.append(bytearray(1 << 24))\n"
        "\ndef fine(ctx):\n    return True\n",
    )
    write(
        "suite.yaml",
        "name: m\ncases:\n  - {name: a, output: x, graders: [{kind: code, grader: 'graders:hog'}, "
        "{kind: code, grader: 'graders:fine'}]}\n",
    )
    done = gradekit(
        "run",
        "suite.yaml",
        "--isolation",
        "process",
        "--memory-limit",
        "300",
        "--quiet",
        "-o",
        "r.json",
    )
    assert done.returncode == 1, done.stderr
    report = json.loads((Path(write("x", "").parent) / "r.json").read_text())
    hog, fine = report["cases"][0]["turns"][0]["results"]
    assert hog["error"] == (
        "MemoryError: grader 'hog' exceeded the memory limit of 300 MiB; raise the limit or "
        "fix the grader"
    )
    assert fine["passed"] is True
    assert report["summary"]["errored"] == 1


def test_kinds_lists_every_kind_with_its_distribution(gradekit: Run) -> None:
    done = gradekit("kinds", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["kind"]: row for row in json.loads(done.stdout)}
    assert {"equality", "numeric", "contains", "regex", "json", "code"} <= set(rows)
    assert rows["numeric"]["distribution"] == "gradekit"
    assert rows["numeric"]["entry_point"] == "gradekit.graders.numeric:Numeric"
    assert rows["numeric"]["error"] is None
    text = gradekit("kinds")
    assert text.returncode == 0
    numeric = next(line for line in text.stdout.splitlines() if line.startswith("numeric "))
    assert numeric.split()[1] == "gradekit"
    assert numeric.split()[3] == "gradekit.graders.numeric:Numeric"


def test_version_prints_the_installed_version(gradekit: Run) -> None:
    import importlib.metadata

    done = gradekit("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"gradekit {importlib.metadata.version('gradekit')}\n"


def test_schema_is_json_schema_2020_12(gradekit: Run) -> None:
    import jsonschema

    done = gradekit("schema")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
