"""Suites the Dask executor's tests grade, written into a test's folder (a unique module name:
`conftest` is ambiguous when several test folders are collected in one run), and the
`gradekit` command they run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

GRADEKIT = str(Path(sys.executable).parent / "gradekit")

GRADERS_PY = '''
import os
import signal
import time
from pathlib import Path

from gradekit.code import GraderResult

MARKS = Path(__file__).parent / "marks"


def parity(ctx):
    """Passes for an even number; notes which process graded which case."""
    MARKS.mkdir(exist_ok=True)
    (MARKS / f"{ctx.test_case_name}.{os.getpid()}").write_text(str(os.getppid()))
    number = int(ctx.agent_response)
    return GraderResult(1.0 if number % 2 == 0 else 0.0, reason=f"got {number}")


def crash_on_boom(ctx):
    """Ends the process grading case `boom` (a worker lost every time it grades it): by a
    signal, which no guard catches (`os._exit` is refused while gradekit grades)."""
    if ctx.test_case_name == "boom":
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def slow_parity(ctx):
    """As parity, after a pause (a long one for case `slow-17`)."""
    MARKS.mkdir(exist_ok=True)
    (MARKS / f"{ctx.test_case_name}.{os.getpid()}").write_text(str(os.getppid()))
    time.sleep(3.0 if ctx.test_case_name == "slow-17" else 0.05)
    number = int(ctx.agent_response)
    return GraderResult(1.0 if number % 2 == 0 else 0.0, reason=f"got {number}")
'''

MIXED_SUITE = """
name: mixed
policy: all
graders:
  - kind: numeric
    absolute_tolerance: 0.01
cases:
  - name: exact
    output: "42"
    expected: 42
  - name: close-but-contains
    output: "41.5 apples"
    expected: 42
    graders:
      - {kind: contains, values: [apples], weight: 2, threshold: 0.5}
      - {kind: regex, pattern: "^4", advisory: true, isolation: process}
  - name: conversation
    policy: {mode: weighted, threshold: 0.5}
    turns:
      - input: "one?"
        output: "1"
        expected: 1
        tool_calls: [{name: calc, arguments: {expr: "0+1"}, result: 1}]
        context: ["one is 1"]
      - input: "two?"
        output: "3"
        expected: 2
        metadata: {difficulty: [1, 2], note: "asked twice"}
        graders: [{kind: code, grader: "MODULE:parity", fail_on_error: true}]
  - name: ended-early
    workspace: out
    turns:
      - output: "not a number"
        graders: [{kind: code, grader: "MODULE:parity", fail_on_error: true}]
      - output: "2"
  - name: transcript
    expected: "21"
    graders: [{kind: contains, values: ["21"]}]
    messages:
      - {role: system, content: "Be brief."}
      - {role: user, content: "Weather in Paris?"}
      - role: assistant
        tool_calls:
          - id: call_1
            type: function
            function: {name: get_weather, arguments: '{"city": "Paris"}'}
      - {role: tool, tool_call_id: call_1, content: '{"temp": 21}'}
      - {role: assistant, content: "It is 21 degrees."}
dataset: data.jsonl
"""


def write_graders(folder: Path, module: str) -> None:
    """`GRADERS_PY` as `module`.py in `folder`. Module names are shared by a whole process,
    the workers' too, which outlive a test: each test names its own module."""
    (folder / f"{module}.py").write_text(textwrap.dedent(GRADERS_PY), encoding="utf-8")


def write_mixed_suite(folder: Path, module: str, lines: int = 300) -> Path:
    """The mixed suite above, its graders `module`, and a dataset of `lines` lines, one of
    them malformed and some with graders of their own."""
    write_graders(folder, module)
    (folder / "out").mkdir()
    with open(folder / "data.jsonl", "w", encoding="utf-8") as data:
        for number in range(lines):
            line: dict[str, Any] = {"name": f"d{number}", "output": str(number % 5), "expected": 2}
            if number % 7 == 0:
                line["graders"] = [{"kind": "code", "grader": f"{module}:parity"}]
            if number % 11 == 0:
                line["expected"] = {"value": 2, "unit": None}
            data.write(json.dumps(line) + "\n")
            if number == 150:
                data.write('{"name": "broken", "output": \n')
    path = folder / "suite.yaml"
    text = textwrap.dedent(MIXED_SUITE).lstrip().replace("MODULE", module)
    path.write_text(text, encoding="utf-8")
    return path


SLOW_CASES = 40
"""The cases of `write_slow_suite`: `slow-0` to `slow-39`."""


def write_slow_suite(folder: Path, module: str) -> Path:
    """A suite of `SLOW_CASES` cases graded by `slow_parity` (`GRADERS_PY` as `module`), where
    `slow-17` takes 3 s: time to kill the worker grading it."""
    write_graders(folder, module)
    lines = [f'  - {{name: slow-{n}, output: "{n}"}}' for n in range(SLOW_CASES)]
    path = folder / "suite.yaml"
    path.write_text(
        f"name: kill\ngraders: [{{kind: code, grader: '{module}:slow_parity'}}]\ncases:\n"
        + "\n".join(lines)
        + "\n",
        encoding="utf-8",
    )
    return path


def graded_by(folder: Path, case: str) -> set[int]:
    """The pids of the processes that began grading `case` (the marks `parity` leaves)."""
    return {int(mark.name.rsplit(".", 1)[1]) for mark in (folder / "marks").glob(f"{case}.*")}


def assert_no_case_lost_or_doubled(
    folder: Path, killed: list[int], done: subprocess.CompletedProcess[str]
) -> dict[str, Any]:
    """What a run of the `SLOW_CASES` slow cases (`--resume log.jsonl`, `-o out.json`) shows
    after the worker grading `slow-17` was killed: that case graded again elsewhere, every case
    in the report once, in suite order, with its verdict, and once in the log. The report."""
    assert killed, "slow-17 was never graded"
    assert done.returncode == 1, done.stderr  # the odd numbers fail
    graders = graded_by(folder, "slow-17")
    assert killed[0] in graders and len(graders) == 2  # graded again, elsewhere
    data: dict[str, Any] = json.loads((folder / "out.json").read_text(encoding="utf-8"))
    names = [f"slow-{n}" for n in range(SLOW_CASES)]
    assert [case["name"] for case in data["cases"]] == names
    assert [case["passed"] for case in data["cases"]] == [n % 2 == 0 for n in range(SLOW_CASES)]
    summary = data["summary"]
    half = SLOW_CASES // 2
    assert (summary["cases"], summary["passed"], summary["failed"]) == (SLOW_CASES, half, half)
    logged = [json.loads(line)["name"] for line in (folder / "log.jsonl").open()]
    assert sorted(logged) == sorted(names)  # each case once
    return data


@contextlib.contextmanager
def killing_the_worker_grading(folder: Path, case: str, seconds: float) -> Iterator[list[int]]:
    """While the block runs (for at most `seconds`), SIGKILL the process that begins grading
    `case` as soon as its mark appears; yields the list that then holds its pid."""
    killed: list[int] = []

    def kill() -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not killed:
            for pid in graded_by(folder, case):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.01)

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        yield killed
    finally:
        killer.join()


def gradekit(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The `gradekit` command run in `cwd` (`env` added to the environment, from which a
    scheduler of the caller's own is taken out), its output captured."""
    environment = {k: v for k, v in os.environ.items() if k != "GRADEKIT_DASK_SCHEDULER"}
    environment.update(env or {})
    return subprocess.run(
        [GRADEKIT, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env=environment,
        stdin=subprocess.DEVNULL,
    )
