"""What a suite, a dataset or a plugin names reaches the terminal and GitHub's log escaped.

A suite's name, a case's, a grader's, a message or a plugin's metadata is text someone else
may have written: an ESC sequence in it (`\\x1b[2J` clears the screen, `\\x1b]8;;` hides a
link) or a bidi control (U+202E turns the rest of the line around, as in the "Trojan Source"
attacks) would act on the reader's terminal. Every such character is shown as its escape.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from cli_support import Run

# Every character the escaping promises to show visibly, and none that may act on a terminal.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

SUITE = r"""
name: "evil\e[2J\u202Eok"
cases:
  - {name: "case\u2066x", output: a, expected: b, graders: [{kind: equality, name: "g\u200Fx"}]}
  - {name: "bell\a\u061C", output: a, expected: b}
graders: [{kind: contains, name: "c\x9bx", values: [b]}]
"""

SHOWN_NAME = "evil\\x1b[2J\\u202eok"


def _visible(text: str) -> None:
    found = _HIDDEN.search(text)
    assert found is None, f"raw {found[0]!r} in {text!r}"


def test_names_reach_the_console_and_github_escaped(gradekit: Run, tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE.lstrip(), encoding="utf-8")

    done = gradekit("run", "suite.yaml", "--annotations", "github")

    assert done.returncode == 1, done.stderr
    _visible(done.stdout)
    _visible(done.stderr)
    assert f"gradekit: {SHOWN_NAME}: 2 cases:" in done.stderr  # the one-line summary
    assert f"gradekit: {SHOWN_NAME} failed" in done.stdout  # the summary table's title
    assert "  FAIL   case\\u2066x\n" in done.stdout
    assert "  FAIL   bell\\x07\\u061c\n" in done.stdout
    assert "turn 0: g\\u200fx failed:" in done.stdout
    assert "turn 0: c\\x9bx failed:" in done.stdout
    notice = next(line for line in done.stdout.splitlines() if line.startswith("::notice "))
    # GitHub's own escaping stays on top: `:` in a property is %3A.
    assert f"title=gradekit%3A {SHOWN_NAME}::" in notice


def test_validate_shows_the_suite_name_escaped(gradekit: Run, tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE.lstrip(), encoding="utf-8")

    done = gradekit("validate", "suite.yaml")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"suite.yaml: valid: suite '{SHOWN_NAME}', 2 cases\n"


def test_load_errors_show_what_the_file_wrote_escaped(gradekit: Run, tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        'cases: [{graders: [{kind: "numer\\u202eic"}]}]\n', encoding="utf-8"
    )

    done = gradekit("validate", "suite.yaml")

    assert done.returncode == 2
    _visible(done.stderr)
    assert "numer\\u202eic" in done.stderr


def _plugin(site: Path) -> None:
    info = site / "acme_terminal-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "acme_terminal.py").write_text("def factory(name, config):\n    return None\n")
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-terminal\nVersion: 1.0\u202e\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[gradekit.graders]\nacme.fine = acme_terminal:factory\n"
        "acme.\x1b[2Jbad = acme_terminal:factory\n",
        encoding="utf-8",
    )


def test_kinds_shows_a_plugins_metadata_escaped(gradekit: Run, tmp_path: Path) -> None:
    _plugin(tmp_path / "site")
    path = os.pathsep.join(filter(None, [str(tmp_path / "site"), os.environ.get("PYTHONPATH")]))

    done = gradekit("kinds", env={"PYTHONPATH": path})

    assert done.returncode == 0, done.stderr
    _visible(done.stdout)
    fine = next(line for line in done.stdout.splitlines() if line.startswith("acme.fine "))
    assert fine.split()[:3] == ["acme.fine", "acme-terminal", "1.0\\u202e"]
    assert "acme.\\x1b[2Jbad: " in done.stdout  # refused (not a kind name), listed apart


def test_compare_shows_what_a_report_says_escaped(gradekit: Run, tmp_path: Path) -> None:
    # A report may come from a pull request: its versions and names are someone else's text.
    (tmp_path / "suite.yaml").write_text(SUITE.lstrip(), encoding="utf-8")
    gradekit("run", "suite.yaml", "-o", "base.json")
    report = json.loads((tmp_path / "base.json").read_text(encoding="utf-8"))
    report["environment"]["kinds"]["equality"]["version"] = "9\x1b]8;;http://x\x07"
    report["cases"][0]["passed"] = True  # so case\u2066x "regressed"
    (tmp_path / "new.json").write_text(json.dumps(report), encoding="utf-8")

    done = gradekit("compare", "new.json", "base.json")

    _visible(done.stdout)
    _visible(done.stderr)
    assert "  case\\u2066x: pass -> fail\n" in done.stdout
    assert "  equality: gradekit 9\\x1b]8;;http://x\\x07 -> " in done.stdout
