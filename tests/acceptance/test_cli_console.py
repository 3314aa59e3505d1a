"""What `gradekit run` shows: a bar with live counts and an ETA on a terminal, plain lines in CI
and on pipes, FAIL and ERROR in colour by the rules (NO_COLOR, FORCE_COLOR), the reports being
written, and nothing when quiet."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest
from cli_support import Run, gradekit_command

from gradekit.report.console import LONG_TABLE


def _run_on_terminal(
    args: list[str], cwd: Path, *, stdout: bool = False, **settings: str
) -> tuple[int, str]:
    """Run gradekit with stderr (and with `stdout`, stdout) on a pseudo-terminal, with the
    environment variables `settings` (CI, NO_COLOR and FORCE_COLOR unset unless given);
    return its exit code and what it drew."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "NO_COLOR", "FORCE_COLOR"}}
    env.update({"COLUMNS": "160", "TERM": "xterm", **settings})
    process = subprocess.Popen(
        [gradekit_command(), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=follower if stdout else subprocess.DEVNULL,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    drawn = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            drawn += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=30), drawn.decode(errors="replace")


def test_progress_bar_on_a_terminal(mixed_suite: Path, tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(["run", "suite.yaml"], tmp_path)
    assert code == 1
    assert "grading" in drawn
    assert "4/4" in drawn  # done of total: the suite's size is known
    assert "/s" in drawn  # the rate
    assert "0:00:0" in drawn  # elapsed
    assert "gradekit: mixed: 4 cases" not in drawn  # the one-line summary is for non-terminals


def test_one_line_summary_when_not_a_terminal(gradekit: Run, mixed_suite: Path) -> None:
    done = gradekit("run", "suite.yaml")
    assert done.stderr.startswith(
        "gradekit: mixed: 4 cases: 2 passed, 1 failed, 1 errored "
        "(50.0% pass rate, 95% CI 15.0-85.0; 66.7% of the graded cases) in "
    )
    assert done.stderr.count("\n") == 1


def test_quiet_prints_nothing(mixed_suite: Path, tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(["run", "suite.yaml", "--quiet"], tmp_path)
    assert (code, drawn) == (1, "")


def test_plain_text_without_rich(mixed_suite: Path, tmp_path: Path) -> None:
    """rich is optional: without it, the same summary as aligned plain text."""
    import sys

    program = (
        "import sys; sys.modules['rich'] = None\n"
        "from gradekit.cli import main\n"
        "raise SystemExit(main(['run', 'suite.yaml']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "gradekit: mixed failed",
        "cases  passed  failed  errored  pass rate                 graded pass rate  duration",
        "-----  ------  ------  -------  ------------------------  ----------------  --------",
    ]
    assert re.fullmatch(
        r"    4       2       1        1  50\.0% \(95% CI 15\.0-85\.0\)             66\.7% +\d+ ms",
        lines[3],
    ), lines[3]
    assert len(lines[3]) == len(lines[1])  # the duration aligned right, as a number
    assert "numeric        1       1        0      50.0%  0.500 (95% CI 0.095-0.905)" in lines
    assert "explode        0       0        1       0.0%  -" in lines


def test_tables_drawn_on_a_terminal_and_plain_on_a_pipe(
    gradekit: Run, mixed_suite: Path, tmp_path: Path
) -> None:
    code, drawn = _run_on_terminal(["run", "suite.yaml"], tmp_path, stdout=True)
    assert code == 1
    plain = _SGR.sub("", drawn)
    assert "┃ grader" in plain and "│ numeric" in plain  # rich's table
    piped = gradekit("run", "suite.yaml")
    assert "│" not in piped.stdout and "┃" not in piped.stdout
    assert "grader    passed  failed  errored  pass rate  mean score" in piped.stdout.splitlines()
    forced = gradekit("run", "suite.yaml", env={"FORCE_COLOR": "1"})
    assert "┃ grader" in _SGR.sub("", forced.stdout)  # CI logs that render it: FORCE_COLOR


def test_kinds_is_plain_text_on_a_pipe(gradekit: Run) -> None:
    done = gradekit("kinds")
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"\d+ grader kinds", lines[0])
    assert lines[1].split() == ["kind", "distribution", "version", "entry", "point"]
    assert set(lines[2]) == {"-", " "}
    equality = next(line for line in lines if line.startswith("equality "))
    assert equality.split()[:2] == ["equality", "gradekit"]
    assert equality.split()[3].startswith("gradekit.graders.equality:")


# -- live counts, ETA, CI lines, colour, report writing ---------------------------------------

SLOW_GRADERS = """
import time

def slow(ctx):
    time.sleep(0.05)
    if ctx.sample.output == "boom":
        raise ValueError("boom")
    return ctx.sample.output == "ok"
"""

SLOW_CASES = 36
"""At 0.05 s a case and two at once, the run lasts about a second: long enough for an ETA."""

_SGR = re.compile(r"\x1b\[[0-9;]*m")  # a colour or style: what NO_COLOR forbids
_ESCAPE = re.compile(r"\x1b")
_LINE = re.compile(
    r"graded (\d+)/36 cases \((\d+)%\): (\d+) passed, (\d+) failed, (\d+) errored, "
    r"\d+ cases/s, ETA (--|\d+s)"
)


@pytest.fixture
def slow_suite(tmp_path: Path) -> Path:
    """36 cases of 0.05 s each: 28 pass, 4 fail (c01, c10, ...), 4 error (c05, c14, ...)."""
    (tmp_path / "graders.py").write_text(SLOW_GRADERS)
    lines = ["name: slow", "graders: [{kind: code, grader: 'graders:slow'}]", "cases:"]
    for index in range(SLOW_CASES):
        output = {1: "no", 5: "boom"}.get(index % 9, "ok")
        lines.append(f"  - {{name: c{index:02d}, output: {output}}}")
    suite = tmp_path / "suite.yaml"
    suite.write_text("\n".join(lines) + "\n")
    return suite


def test_the_bar_counts_outcomes_and_shows_an_eta(slow_suite: Path, tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(
        ["run", "suite.yaml", "--jobs", "2", "-o", "r.json"], tmp_path, stdout=True
    )
    assert code == 1
    plain = _SGR.sub("", drawn)
    assert "36/36 cases" in plain
    counts = re.findall(r"(\d+) passed, (\d+) failed, (\d+) errored", plain)
    assert len(set(counts)) > 2  # redrawn as the counts grew
    assert counts[-1] == ("28", "4", "4")
    assert "ETA --" in plain  # before half a second has passed
    assert re.search(r"ETA [1-9]\d*s", plain), plain  # from the rate, once it is known
    assert "\x1b[31m4 failed\x1b[0m" in drawn  # the bar's counts in colour
    assert "\x1b[33m4 errored\x1b[0m" in drawn
    assert "\x1b[31mFAIL \x1b[0m  " in drawn  # the summary's labels too
    assert "\x1b[33mERROR\x1b[0m  " in drawn
    assert re.search(r"writing r\.json \.\.\. done in \d+\.\d s", plain)
    assert "graded 36/36" not in plain  # lines are for CI and pipes


def test_no_color_under_a_terminal(slow_suite: Path, tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(
        ["run", "suite.yaml", "--jobs", "4"], tmp_path, stdout=True, NO_COLOR="1", FORCE_COLOR="1"
    )
    assert code == 1
    assert "36/36" in drawn  # the bar is drawn ...
    assert not _SGR.search(drawn), drawn  # ... without a colour or style code
    assert "  FAIL   c01" in drawn


def _plain_lines(text: str) -> list[tuple[str, ...]]:
    return [m.groups() for m in _LINE.finditer(_SGR.sub("", text))]


def test_ci_gets_plain_lines_every_interval(slow_suite: Path, tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(
        ["run", "suite.yaml", "--jobs", "2", "-o", "r.json"],
        tmp_path,
        CI="true",
        GRADEKIT_PROGRESS_INTERVAL="0.25",
    )
    assert code == 1
    lines = _plain_lines(drawn)
    assert len(lines) >= 3, drawn  # at least two while grading, and the last
    done = [int(line[0]) for line in lines]
    assert done == sorted(done)
    assert lines[-1] == ("36", "100", "28", "4", "4", "0s")
    assert "ETA --" in drawn
    assert "\r" not in drawn.replace("\r\n", "\n")  # nothing redrawn in place
    assert "\x1b[31m4 failed\x1b[0m" in drawn  # a terminal still gets colour
    assert "writing r.json ...\r\nwriting r.json ... done in " in drawn


def test_a_pipe_gets_plain_lines_without_escape_codes(slow_suite: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "NO_COLOR", "FORCE_COLOR"}}
    env["GRADEKIT_PROGRESS_INTERVAL"] = "0.25"
    done = subprocess.run(
        [gradekit_command(), "run", "suite.yaml", "--jobs", "2", "--html", "r.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = _plain_lines(done.stderr)
    assert len(lines) >= 3, done.stderr
    assert lines[-1][:5] == ("36", "100", "28", "4", "4")
    assert not _ESCAPE.search(done.stderr + done.stdout)
    assert "  FAIL   c01\n" in done.stdout
    tail = done.stderr.splitlines()[-3:]
    assert tail[0] == "writing r.html ..."
    assert re.fullmatch(r"writing r\.html \.\.\. done in \d+\.\d s", tail[1])
    assert tail[2].startswith("gradekit: slow: 36 cases: 28 passed, 4 failed, 4 errored")

    env["FORCE_COLOR"] = "1"  # CI logs that render ANSI
    done = subprocess.run(
        [gradekit_command(), "run", "suite.yaml", "--jobs", "8"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert "\x1b[31mFAIL \x1b[0m  c01" in done.stdout
    assert "\x1b[33m4 errored\x1b[0m" in done.stderr


def _big_suite(folder: Path, cases: int) -> None:
    """A suite of `cases` passing equality cases (a dataset) in `folder`."""
    (folder / "data.jsonl").write_text(
        "".join(f'{{"name": "c{i}", "output": "{i}", "expected": "{i}"}}\n' for i in range(cases))
    )
    (folder / "suite.yaml").write_text(
        "name: big\ngraders: [{kind: equality}]\ndataset: data.jsonl\n"
    )


SHORT_INTERVAL = {"GRADEKIT_PROGRESS_INTERVAL": "0.001"}
"""Progress lines as often as they can come: any work that lasts is counted."""


def test_writing_a_large_report_shows_progress(gradekit: Run, tmp_path: Path) -> None:
    """After grading, each report's writing is announced, counted while it lasts, and timed."""
    cases = 3000
    _big_suite(tmp_path, cases)
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--html", "r.html", env=SHORT_INTERVAL)
    assert done.returncode == 0, done.stderr
    written = re.findall(r"writing r\.html: ([\d,]+)/3,000 cases \(\d+%\) written", done.stderr)
    assert written, done.stderr
    numbers = [int(n.replace(",", "")) for n in written]
    assert numbers == sorted(numbers) and 0 < numbers[-1] <= cases
    for name in ("r.json", "r.html"):
        assert f"writing {name} ...\n" in done.stderr
        assert re.search(rf"writing {re.escape(name)} \.\.\. done in \d+\.\d s\n", done.stderr)


def test_reading_a_large_baseline_or_compared_report_shows_progress(
    gradekit: Run, tmp_path: Path
) -> None:
    """A run's file read back (a baseline, compare's two files) says nothing when it is read
    at once; when it lasts, it is announced, counted while it lasts, and timed."""
    cases = 3000
    _big_suite(tmp_path, cases)
    assert gradekit("run", "suite.yaml", "-o", "base.json", "-q").returncode == 0
    (tmp_path / "new.json").write_bytes((tmp_path / "base.json").read_bytes())
    # Read within a second: not a word.
    done = gradekit("compare", "base.json", "new.json")
    assert done.returncode == 0, done.stderr
    assert "reading" not in done.stderr
    # Lasting longer than the interval between lines (made short here): lines.
    for args, files in (
        (("compare", "base.json", "new.json"), ("base.json", "new.json")),
        (("run", "suite.yaml", "--baseline", "base.json"), ("base.json",)),
    ):
        done = gradekit(*args, env=SHORT_INTERVAL)
        assert done.returncode == 0, done.stderr
        for name in files:
            shown = re.escape(name)
            read = re.findall(rf"reading {shown}: ([\d,]+) cases read\n", done.stderr)
            assert read, done.stderr
            numbers = [int(n.replace(",", "")) for n in read]
            assert numbers == sorted(numbers) and 0 < numbers[-1] <= cases
            assert re.search(rf"reading {shown} \.\.\. done in \d+\.\d s\n", done.stderr)
    # --quiet: nothing.
    done = gradekit("run", "suite.yaml", "--baseline", "base.json", "-q", env=SHORT_INTERVAL)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


MARKUP_SUITE = """
name: markup
graders:
  - {kind: equality, name: "[red]strict[/red] :smile:"}
cases:
  - {name: one, output: "a", expected: "a"}
"""


def test_names_in_a_drawn_table_are_shown_as_written_not_read_as_markup(tmp_path: Path) -> None:
    # rich reads `[red]...[/red]` as a style and `:smile:` as an emoji in text it is given as
    # a string: a grader so named would lose its name in the terminal's table.
    (tmp_path / "suite.yaml").write_text(MARKUP_SUITE)
    code, drawn = _run_on_terminal(["run", "suite.yaml"], tmp_path, stdout=True)
    assert code == 0
    plain = _SGR.sub("", drawn)
    assert "│ [red]strict[/red] :smile: │" in plain
    assert "\N{SMILING FACE WITH SMILING EYES}" not in plain


def _plugins(site: Path, count: int) -> None:
    """`count` installed plugin distributions, each with one kind, laid out in `site` as
    `pip install --target` does."""
    for number in range(count):
        module = f"listed_plugin_{number:03d}"
        (site / module).mkdir(parents=True)
        (site / module / "__init__.py").write_text("def factory(name, config):\n    pass\n")
        info = site / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: listed-plugin-{number:03d}\nVersion: 1.0\n"
        )
        (info / "entry_points.txt").write_text(
            f"[gradekit.graders]\nlisted_{number:03d}.kind = {module}:factory\n"
        )


def test_kinds_draws_a_short_table_and_writes_a_long_one_as_plain_text(tmp_path: Path) -> None:
    code, drawn = _run_on_terminal(["kinds"], tmp_path, stdout=True)
    assert code == 0
    assert "┃ kind" in _SGR.sub("", drawn)  # the built-in and bundled kinds: a table rich draws
    _plugins(tmp_path / "site", 60)
    code, drawn = _run_on_terminal(["kinds"], tmp_path, stdout=True, PYTHONPATH="site")
    assert code == 0
    lines = _SGR.sub("", drawn).splitlines()
    count = int(lines[0].split()[0])
    assert count > LONG_TABLE
    assert lines[1].split() == ["kind", "distribution", "version", "entry", "point"]
    assert "│" not in drawn and "┃" not in drawn
    assert any(
        line.split()[:3] == ["listed_059.kind", "listed-plugin-059", "1.0"] for line in lines
    )


def test_a_dumb_terminal_gets_plain_ascii(slow_suite: Path, tmp_path: Path) -> None:
    """TERM=dumb (Emacs' shell): no bar, no box characters, no colour: plain lines and text."""
    code, drawn = _run_on_terminal(
        ["run", "suite.yaml", "--jobs", "2", "-o", "r.json"],
        tmp_path,
        stdout=True,
        TERM="dumb",
        GRADEKIT_PROGRESS_INTERVAL="0.25",
    )

    assert code == 1
    assert drawn.isascii(), sorted({c for c in drawn if not c.isascii()})
    assert not _SGR.search(drawn)
    lines = _plain_lines(drawn)
    assert lines and lines[-1] == ("36", "100", "28", "4", "4", "0s")  # progress as lines
    assert "\r" not in drawn.replace("\r\n", "\n")  # nothing redrawn in place
    assert re.search(r"\r\n-+  -+  -+", drawn)  # the tables as aligned plain text
    assert "  FAIL   c01" in drawn
