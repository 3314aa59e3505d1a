"""`gradekit run` in GitHub Actions, as a job runs it: with `GITHUB_ACTIONS=true` the command
prints a `::error` workflow command per case that did not pass, pointing at the case in the
suite file or at its dataset line, escaped as GitHub reads them, at most 50 and a notice; and
appends the Markdown summary to `$GITHUB_STEP_SUMMARY`."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from cli_support import Run

SUITE = """
name: in-ci
graders:
  - kind: equality
dataset: data/lines.jsonl
cases:
  - name: fine
    output: "a"
    expected: "a"
  - name: "odd: name, 100%"
    output: "b"
    expected: "c"
    graders: [{kind: contains, values: [zzz]}]
"""

LINES = [
    {"name": "line-ok", "output": "x", "expected": "x"},
    None,  # a blank line: the numbers still count it
    {"name": "line-bad", "output": "x", "expected": "y"},
]


def _unescape(text: str) -> str:
    """GitHub's reading of a workflow command's escapes."""
    return re.sub("%(25|0D|0A|3A|2C)", lambda m: bytes.fromhex(m[1]).decode(), text)


def _commands(stdout: str) -> list[tuple[str, dict[str, str], str]]:
    """(command, properties, message) of every workflow command printed, unescaped."""
    found = []
    for line in stdout.splitlines():
        match = re.fullmatch(r"::(\w+)(?: ([^:]*))?::(.*)", line)
        if match is None:
            continue
        properties = {}
        for part in (match[2] or "").split(","):
            key, _, value = part.partition("=")
            properties[key] = _unescape(value)
        found.append((match[1], properties, _unescape(match[3])))
    return found


def _suite(folder: Path) -> None:
    (folder / "evals" / "data").mkdir(parents=True)
    (folder / "evals" / "suite.yaml").write_text(textwrap.dedent(SUITE).lstrip())
    text = "".join("\n" if line is None else json.dumps(line) + "\n" for line in LINES)
    (folder / "evals" / "data" / "lines.jsonl").write_text(text)


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_annotations_point_at_the_cases_and_the_summary_is_appended(
    tmp_path: Path, gradekit: Run
) -> None:
    _suite(tmp_path)
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKSPACE": str(tmp_path),
    }
    done = gradekit("run", "evals/suite.yaml", "-q", env=env)
    assert done.returncode == 1, done.stderr
    commands = _commands(done.stdout)
    assert [name for name, _, _ in commands] == ["error", "error", "notice"]
    (_, odd, message), (_, line, _), (_, notice, said) = commands
    suite_file = tmp_path / "evals" / "suite.yaml"
    assert odd == {
        "file": "evals/suite.yaml",
        "line": str(_line_of(suite_file, "odd: name")),
        "col": "5",
        "title": "gradekit: odd: name, 100% failed",
    }
    # Two failing graders: two lines of the message (an escaped newline, read back).
    assert message == (
        "turn 0: equality failed: expected 'c', got 'b'\n"
        "turn 0: contains failed: missing 'zzz' in 'b' (found 0 of 1)"
    )
    assert "%0A" in done.stdout and "odd%3A name%2C 100%25 failed" in done.stdout
    assert line == {
        "file": "evals/data/lines.jsonl",
        "line": "3",
        "title": "gradekit: line-bad failed",
    }
    assert notice == {"title": "gradekit: in-ci"}
    assert said == "2 of 4 cases did not pass (2 failed, 0 errored)"
    written = summary.read_text()
    assert written.startswith("earlier step\n\n## gradekit: in-ci ❌ failed\n")
    assert written.endswith("</details>\n\n")  # a block of its own
    assert "<b>odd: name, 100%</b>: failed</summary>" in written

    # --annotations none: neither the commands nor the summary.
    summary.write_text("")
    quiet = gradekit("run", "evals/suite.yaml", "-q", "--annotations", "none", env=env)
    assert quiet.returncode == 1 and "::" not in quiet.stdout
    assert summary.read_text() == ""
    # Outside GitHub, asked for: the commands, and no summary without its variable.
    asked = gradekit("run", "evals/suite.yaml", "-q", "--annotations", "github")
    assert [name for name, _, _ in _commands(asked.stdout)] == ["error", "error", "notice"]
    # Not asked for, not in GitHub: plain output.
    assert "::" not in gradekit("run", "evals/suite.yaml", "-q").stdout
    # A summary file that cannot be written is a report that could not be written: exit 3.
    folder = {**env, "GITHUB_STEP_SUMMARY": str(tmp_path / "evals")}
    unwritten = gradekit("run", "evals/suite.yaml", "-q", env=folder)
    assert unwritten.returncode == 3, unwritten.stderr
    assert f"cannot write {tmp_path / 'evals'}" in unwritten.stderr


def test_at_most_50_annotations_then_a_notice_counting_the_rest(
    tmp_path: Path, gradekit: Run
) -> None:
    lines = [{"name": f"case-{n}", "output": "x", "expected": "y"} for n in range(60)]
    (tmp_path / "many.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "suite.yaml").write_text(
        "name: many\ngraders: [{kind: equality}]\ndataset: many.jsonl\n"
    )
    done = gradekit("run", "suite.yaml", "-q", env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 1, done.stderr
    commands = _commands(done.stdout)
    errors = [props for name, props, _ in commands if name == "error"]
    assert len(errors) == 50
    assert [e["line"] for e in errors] == [str(n) for n in range(1, 51)]
    assert commands[-1][0] == "notice"
    assert commands[-1][2] == (
        "60 of 60 cases did not pass (60 failed, 0 errored); 10 not annotated here "
        "(see the reports)"
    )


def test_a_regression_is_named_in_the_annotation_and_the_notice(
    tmp_path: Path, gradekit: Run
) -> None:
    (tmp_path / "suite.yaml").write_text(
        "name: drift\ngraders: [{kind: equality}]\ncases:\n"
        "  - {name: breaks, output: a, expected: a}\n"
    )
    assert gradekit("run", "suite.yaml", "-q", "-o", "base.json").returncode == 0
    (tmp_path / "suite.yaml").write_text(
        "name: drift\ngraders: [{kind: equality}]\ncases:\n"
        "  - {name: breaks, output: b, expected: a}\n"
    )
    done = gradekit(
        "run", "suite.yaml", "-q", "--baseline", "base.json", env={"GITHUB_ACTIONS": "true"}
    )
    assert done.returncode == 1, done.stderr
    (error, notice) = _commands(done.stdout)
    assert error[1]["title"] == "gradekit: breaks failed (regressed)"
    assert error[1]["line"] == "4"
    assert notice[2].endswith("; 1 regressed against base.json")


NAMES_SUITE = r"""
name: names
graders: [{kind: equality, name: "eq\e[31mred"}]
cases:
  - {name: "wipe\e[2J", output: a, expected: b}
  - {name: "two\nlines", output: a, expected: b}
  - {name: tries, expected: a, attempts: [a, b]}
"""


def test_names_with_control_characters_show_as_escapes_and_attempts_are_named(
    gradekit: Run, tmp_path: Path
) -> None:
    (tmp_path / "suite.yaml").write_text(NAMES_SUITE.lstrip(), encoding="utf-8")

    done = gradekit("run", "suite.yaml", "--annotations", "github")

    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stdout  # a name can no longer clear the terminal or colour it
    assert "  FAIL   wipe\\x1b[2J\n" in done.stdout
    assert "  FAIL   two\\nlines\n" in done.stdout  # one line, not two
    assert "turn 0: eq\\x1b[31mred failed:" in done.stdout
    assert any(line.startswith("eq\\x1b[31mred ") for line in done.stdout.splitlines())  # table
    titles = [props.get("title") for command, props, _ in _commands(done.stdout)]
    assert "gradekit: wipe\\x1b[2J failed" in titles
    assert "gradekit: tries [attempt 1] failed" in titles  # which attempt, as every report says


ATTEMPTS_SUITE = """
name: tries
graders: [{kind: equality}]
dataset: tries.jsonl
cases:
  - name: in-yaml
    expected: a
    attempts:
      - b
      - c
      - output: d
"""


def test_each_attempt_is_annotated_at_its_own_line(tmp_path: Path, gradekit: Run) -> None:
    (tmp_path / "suite.yaml").write_text(ATTEMPTS_SUITE.lstrip())
    lines = [
        {"name": "in-data", "attempt": 0, "output": "x", "expected": "y"},
        {"name": "other", "output": "x", "expected": "x"},
        {"name": "in-data", "attempt": 1, "output": "z", "expected": "y"},
    ]
    (tmp_path / "tries.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    done = gradekit("run", "suite.yaml", "-q", env={"GITHUB_ACTIONS": "true"})

    assert done.returncode == 1, done.stderr
    errors = [props for name, props, _ in _commands(done.stdout) if name == "error"]
    text = (tmp_path / "suite.yaml").read_text().splitlines()
    yaml_lines = [n for n, line in enumerate(text, 1) if line.startswith("      - ")]
    assert [(e["title"], e["file"], e["line"]) for e in errors] == [
        ("gradekit: in-yaml [attempt 0] failed", "suite.yaml", str(yaml_lines[0])),
        ("gradekit: in-yaml [attempt 1] failed", "suite.yaml", str(yaml_lines[1])),
        ("gradekit: in-yaml [attempt 2] failed", "suite.yaml", str(yaml_lines[2])),
        ("gradekit: in-data [attempt 0] failed", "tries.jsonl", "1"),
        ("gradekit: in-data [attempt 1] failed", "tries.jsonl", "3"),
    ]


def _headings(markdown: str) -> list[str]:
    """The level-2 headings GitHub shows for a step summary: rendered by cmark-gfm, GitHub's
    own renderer, with raw HTML kept (GitHub sanitizes it afterwards instead)."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    return re.findall(r"<h2>(.*?)</h2>", html)


def test_the_step_summary_of_each_run_renders_as_a_block_of_its_own(
    tmp_path: Path, gradekit: Run
) -> None:
    _suite(tmp_path)
    summary = tmp_path / "step-summary.md"
    # An earlier step that ends in an HTML block, with no blank line after it.
    summary.write_text("<details><summary>setup</summary>\n\ndone\n</details>")
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(tmp_path)}
    for _ in range(2):  # two runs in one step
        done = gradekit("run", "evals/suite.yaml", "-q", "--annotations", "github", env=env)
        assert done.returncode == 1, done.stderr
    with summary.open("a") as file:  # a later step's own heading
        file.write("## deploy\n")

    headings = _headings(summary.read_text())

    assert headings == ["gradekit: in-ci ❌ failed", "gradekit: in-ci ❌ failed", "deploy"]
