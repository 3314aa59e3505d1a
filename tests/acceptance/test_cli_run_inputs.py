"""The files `gradekit run` reads back (`--resume`, `--baseline`, `--rerun-failed`): one run per
results log, a file that is not a log never modified, only regular files read, in bounded
memory, nesting-safe, strict JSON in and out; and duplicate case names refused at load."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import Run, gradekit_command

Write = Callable[[str, str], Path]

SLOW_GRADERS = """
    import os
    import time

    def slow(ctx):
        time.sleep(0.05)
        return True

    def held(ctx):
        # The last case waits (a minute at most) for the test to let the run end, so the run
        # is still going when the test needs it to be, however slow the machine.
        time.sleep(0.05)
        deadline = time.monotonic() + 60
        while ctx.sample.output == "39" and not os.path.exists("release"):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True
"""


def _suite(write: Write, cases: int, *, slow: bool = False, grader: str = "slow") -> None:
    graders = f', "graders": [{{"kind": "code", "grader": "graders:{grader}"}}]' if slow else ""
    if slow:
        write("graders.py", SLOW_GRADERS)
    lines = [
        f'{{"name": "case-{i:05d}", "output": "{i}", "expected": {i}{graders}}}'
        for i in range(cases)
    ]
    write("data.jsonl", "\n".join(lines) + "\n")
    write("suite.yaml", "name: s\ngraders: [{kind: numeric}]\ndataset: data.jsonl\n")


def _strict(text: str) -> Any:
    """The JSON value of `text`, refusing what strict JSON has not (NaN, Infinity)."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not strict JSON")

    return json.loads(text, parse_constant=refuse)


# One run per results log.


def test_a_second_run_on_the_same_log_exits_2_and_the_first_finishes_whole(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write, 40, slow=True, grader="held")
    log = tmp_path / "shared.jsonl"
    first = subprocess.Popen(
        [
            gradekit_command(),
            "run",
            "suite.yaml",
            "--resume",
            "shared.jsonl",
            "-o",
            "a.json",
            "--jobs",
            "1",
        ],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_bytes().count(b"\n") >= 2):
            assert first.poll() is None, "the first run ended too soon"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        second = gradekit("run", "suite.yaml", "--resume", "shared.jsonl", "-o", "b.json")
        assert first.poll() is None, "the second run must meet the first one running"
    finally:
        (tmp_path / "release").touch()
        assert first.wait(timeout=120) == 0, first.stderr.read() if first.stderr else ""
    assert second.returncode == 2, second.stderr
    assert second.stderr == (
        "gradekit: cannot write the results log shared.jsonl: another gradekit run is using it "
        "(it holds the log's lock); wait for that run to end, or give this run another "
        "--resume file; nothing was graded\n"
    )
    assert not (tmp_path / "b.json").exists()
    names = [json.loads(line)["name"] for line in log.read_text().splitlines()]
    assert sorted(names) == [f"case-{i:05d}" for i in range(40)]  # each case once
    report = _strict((tmp_path / "a.json").read_text())
    assert report["summary"]["passed"] == 40


def test_the_log_is_free_again_once_its_run_ended(gradekit: Run, write: Write) -> None:
    _suite(write, 3)
    assert gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-q").returncode == 0
    again = gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-q")
    assert again.returncode == 0, again.stderr


# A file that is not a log is never modified.


@pytest.mark.parametrize(
    "text",
    [b"first note\nsecond note\nlast note", b"only line", b"\xef\xbb\xbfnotes\nmore"],
    ids=["lines", "one-line", "bom"],
)
def test_resume_on_a_text_file_leaves_it_as_it_was(
    gradekit: Run, write: Write, tmp_path: Path, text: bytes
) -> None:
    _suite(write, 3)
    notes = tmp_path / "notes.txt"
    notes.write_bytes(text)
    done = gradekit("run", "suite.yaml", "--resume", "notes.txt")
    assert done.returncode == 2, done.stderr
    assert "notes.txt" in done.stderr
    assert "Traceback" not in done.stderr
    assert notes.read_bytes() == text


def test_a_log_cut_mid_line_is_still_resumed(gradekit: Run, write: Write, tmp_path: Path) -> None:
    _suite(write, 3)
    assert gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-q").returncode == 0
    log = tmp_path / "log.jsonl"
    data = log.read_bytes()
    log.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 30])
    done = gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-o", "r.json")
    assert done.returncode == 0, done.stderr
    assert len(log.read_text().splitlines()) == 3
    assert len(_strict((tmp_path / "r.json").read_text())["cases"]) == 3


# Only regular files, in bounded memory, nesting-safe.


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return fifo


NOT_FILES = {
    "fifo": (_fifo, "a FIFO (named pipe)"),
    "dev-zero": (lambda _: Path("/dev/zero"), "a character device"),
    "folder": (lambda path: path, "a folder"),
}


@pytest.mark.parametrize("option", ["--baseline", "--rerun-failed", "--resume"])
@pytest.mark.parametrize("which", list(NOT_FILES))
def test_an_input_that_is_not_a_regular_file_exits_2_naming_it(
    gradekit: Run, write: Write, tmp_path: Path, option: str, which: str
) -> None:
    _suite(write, 2)
    make, kind = NOT_FILES[which]
    path = make(tmp_path)
    done = gradekit("run", "suite.yaml", option, str(path), "-o", "r.json", timeout=30)
    assert done.returncode == 2, done.stderr
    assert str(path) in done.stderr
    assert kind in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.json").exists()


def _first_bytes(path: Path) -> bytes:
    with path.open("rb") as file:
        return file.read(2000)


def _peak_mb(args: list[str], cwd: Path) -> tuple[int, str, float]:
    """Exit code, stderr and peak memory (MB) of `gradekit *args` (at most: ru_maxrss carries
    pytest's own peak over the fork, so this process must stay small too)."""
    process = subprocess.Popen(
        [gradekit_command(), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, stderr, usage.ru_maxrss / 1024


@pytest.mark.parametrize("option", ["--baseline", "--rerun-failed", "--resume"])
@pytest.mark.parametrize("head", [b"", b'{"suite": "s", "cases": [{"name": "'], ids=["log", "json"])
def test_an_endless_line_is_refused_in_bounded_memory(
    write: Write, tmp_path: Path, option: str, head: bytes
) -> None:
    _suite(write, 2)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as file:  # 1 GiB with no newline, sparse: no disk used
        file.write(head + b"x" * 1000)
        file.truncate(1 << 30)
    before = _first_bytes(huge)
    code, stderr, peak = _peak_mb(["run", "suite.yaml", option, "huge.json"], tmp_path)
    assert code == 2, stderr
    assert "huge.json" in stderr and "MiB" in stderr, stderr
    assert "Traceback" not in stderr
    assert peak < 400, f"{peak:.0f} MB"
    if option == "--resume":
        assert huge.stat().st_size == 1 << 30 and _first_bytes(huge) == before


@pytest.mark.parametrize("option", ["--baseline", "--rerun-failed", "--resume"])
@pytest.mark.parametrize("form", ["log", "json"])
def test_a_file_nested_100k_deep_exits_2_without_a_traceback(
    gradekit: Run, write: Write, tmp_path: Path, option: str, form: str
) -> None:
    _suite(write, 2)
    deep = "[" * 100_000 + "]" * 100_000
    if form == "log":
        text = f'{{"name": "case-00000", "passed": true, "errored": false, "x": {deep}}}\n'
    else:
        text = f'{{"suite": "s", "cases": [{{"name": "case-00000", "x": {deep}}}]}}\n'
    (tmp_path / "deep.json").write_text(text)
    done = gradekit("run", "suite.yaml", option, "deep.json", "-o", "r.json")
    assert done.returncode == 2, done.stderr
    assert "deep.json" in done.stderr and "deep" in done.stderr.replace("deep.json", "")
    assert "Traceback" not in done.stderr


# Strict JSON in and out.


def test_a_log_opening_with_a_bom_resumes_into_a_strict_json_report(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write, 3)
    assert gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-q").returncode == 0
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + log.read_bytes())  # saved by an editor that adds one
    done = gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-o", "r.json", "-q")
    assert done.returncode == 0, done.stderr
    report = _strict((tmp_path / "r.json").read_text())
    assert [case["name"] for case in report["cases"]] == [f"case-{i:05d}" for i in range(3)]
    assert done.stdout.count("case-") == 0  # nothing graded again: no failure listed
    assert log.read_bytes().count(b"\n") == 3  # nothing appended


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_log_line_holding_nan_is_refused_naming_it(
    gradekit: Run, write: Write, tmp_path: Path, constant: str
) -> None:
    _suite(write, 3)
    assert gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-q").returncode == 0
    log = tmp_path / "log.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    lines[1] = re.sub(r'"duration_ms": ?[0-9.e-]+', f'"duration_ms": {constant}', lines[1], count=1)
    assert constant in lines[1]
    log.write_text("".join(lines))
    done = gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-o", "r.json")
    assert done.returncode == 2, done.stderr
    assert "log.jsonl:2:" in done.stderr and constant in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_garbled_resumed_line_is_named_by_its_line(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write, 3)
    assert gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-q").returncode == 0
    log = tmp_path / "log.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    lines[1] = '{"name": "case-00001", "passed": true, "errored": false, "turns": 5}\n'
    log.write_text("".join(lines))
    done = gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-o", "r.json")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("log.jsonl:2: not a finished case"), done.stderr


# Duplicate case names, refused at load.


def test_duplicate_dataset_names_exit_2_naming_both_lines(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    write("suite.yaml", "graders: [{kind: equality}]\ndataset: data.jsonl\n")
    write(
        "data.jsonl",
        '{"name": "a", "output": "x", "expected": "x"}\n'
        '{"name": "b", "output": "x", "expected": "x"}\n'
        '{"name": "a", "output": "x", "expected": "y"}\n',
    )
    for resume in ([], ["--resume", "log.jsonl"]):
        done = gradekit("run", "suite.yaml", "-o", "r.json", *resume)
        assert done.returncode == 2, done.stderr
        assert "data.jsonl:3" in done.stderr and "data.jsonl:1" in done.stderr
        assert "duplicate case name 'a'" in done.stderr
        assert not (tmp_path / "r.json").exists()
        assert not (tmp_path / "log.jsonl").exists() or not (tmp_path / "log.jsonl").read_text()


def test_a_dataset_name_equal_to_a_yaml_case_exits_2_naming_both(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    write(
        "suite.yaml",
        "graders: [{kind: equality}]\ncases:\n  - {name: y1, output: a, expected: a}\n"
        "dataset: data.jsonl\n",
    )
    write("data.jsonl", '{"name": "z"}\n{"name": "y1", "output": "b", "expected": "c"}\n')
    done = gradekit("run", "suite.yaml", "-o", "r.json")
    assert done.returncode == 2, done.stderr
    assert "data.jsonl:2" in done.stderr and "suite.yaml:3" in done.stderr
    assert "duplicate case name 'y1'" in done.stderr


def test_attempts_of_one_case_still_share_its_name(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    write("suite.yaml", "graders: [{kind: equality}]\ndataset: data.jsonl\n")
    write(
        "data.jsonl",
        '{"name": "a", "attempt": 0, "output": "x", "expected": "x"}\n'
        '{"name": "a", "attempt": 1, "output": "y", "expected": "x"}\n',
    )
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--resume", "log.jsonl")
    assert done.returncode == 1, done.stderr
    cases = _strict((tmp_path / "r.json").read_text())["cases"]
    assert [(c["name"], c["attempt"], c["passed"]) for c in cases] == [
        ("a", 0, True),
        ("a", 1, False),
    ]


def test_a_case_with_and_without_attempts_is_a_duplicate(gradekit: Run, write: Write) -> None:
    write("suite.yaml", "graders: [{kind: equality}]\ndataset: data.jsonl\n")
    write(
        "data.jsonl",
        '{"name": "a", "output": "x", "expected": "x"}\n'
        '{"name": "a", "attempt": 0, "output": "y", "expected": "x"}\n',
    )
    done = gradekit("run", "suite.yaml", "-q")
    assert done.returncode == 2, done.stderr
    assert "data.jsonl:2" in done.stderr and "data.jsonl:1" in done.stderr


# A large log shows progress early.


def test_resuming_a_large_log_says_so_before_it_grades(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write, 20_000)
    assert gradekit("run", "suite.yaml", "--resume", "log.jsonl", "-q").returncode == 0
    done = gradekit(
        "run",
        "suite.yaml",
        "--resume",
        "log.jsonl",
        env={"GRADEKIT_PROGRESS_INTERVAL": "0.001"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    reading = [n for n, line in enumerate(lines) if line.startswith("reading log.jsonl")]
    assert reading, done.stderr[:2000]
    assert re.search(r"reading log\.jsonl: [0-9,]+ cases read", done.stderr)
    # The run's own line counts from 0 meanwhile; the first case is counted after the reading.
    graded = [n for n, line in enumerate(lines) if re.match(r"graded [1-9]", line)]
    assert not graded or reading[0] < graded[0]


def test_sigterm_while_a_run_holds_the_log_leaves_it_free(write: Write, tmp_path: Path) -> None:
    _suite(write, 40, slow=True)
    log = tmp_path / "log.jsonl"
    command = [gradekit_command(), "run", "suite.yaml", "--resume", "log.jsonl", "-q"]
    first = subprocess.Popen(command, cwd=tmp_path, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_bytes().count(b"\n") >= 2):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    again = subprocess.run(command, cwd=tmp_path, stdin=subprocess.DEVNULL, timeout=120)
    assert again.returncode == 0  # the lock died with its process
