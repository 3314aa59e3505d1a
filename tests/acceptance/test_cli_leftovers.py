"""A killed run cannot clean up; the next gradekit does: scratch logs, sandbox folders and the
temporary files beside reports carry their owner's pid, and are removed once it is gone (never
while it runs)."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import Run
from processes import killed_at_the_end, pids, start, wait_until

Write = Callable[[str, str], Path]

QUICK_SUITE = """
    name: q
    cases:
      - {name: a, output: '1', expected: 1, graders: [{kind: numeric}]}
"""


@pytest.mark.parametrize(
    ("reports", "scratch"),
    [
        # The JSON report alone: its cases go straight into it, no scratch file of them.
        (["-o", "r.json"], ["sandbox"]),
        # Another report needs the cases too: they are spooled to a scratch file.
        (["-o", "r.json", "--junit", "r.xml"], ["sandbox", "spool"]),
    ],
)
def test_the_next_run_removes_what_a_killed_run_left_in_the_temp_folder(
    gradekit: Run, write: Write, tmp_path: Path, reports: list[str], scratch: list[str]
) -> None:
    pid_file = tmp_path / "pids"
    command = f'["sh", "-c", "echo $$ >> {pid_file}; exec sleep 120"]'
    write(
        "suite.yaml",
        # The command reports its pid in the host's temp folder: no bubblewrap, which hides it.
        "name: kill\nsandbox: none\ncases:\n"
        "  - {name: a, output: '1', expected: 1, graders: [{kind: numeric}]}\n"
        f"  - {{name: b, output: x, graders: [{{kind: program, command: {command}}}]}}\n",
    )
    write("quick.yaml", QUICK_SUITE)
    tmp = tmp_path / "tmp"
    process = start(tmp_path, "suite.yaml", *reports, tmp=tmp)
    with killed_at_the_end(pid_file, process):
        wait_until(process, lambda: len(pids(pid_file)) == 1, "the sandboxed command")
        process.kill()  # SIGKILL: nothing runs to clean up
        process.communicate()
        left = sorted(os.listdir(tmp))
        assert len(left) == len(scratch)
        alive = f"gradekit-log-{os.getpid()}-abcd1234.jsonl"  # this test runs: not swept
        (tmp / alive).write_text("")
        again = start(tmp_path, "quick.yaml", "--quiet", tmp=tmp)
        assert again.wait(timeout=60) == 0, again.communicate()
        assert os.listdir(tmp) == [alive]
        # What made them removable: the owner's pid in their names.
        named = {"sandbox": f"gradekit-sandbox-{process.pid}-X"}
        named["spool"] = f"gradekit-spool-{process.pid}-X.jsonl"
        assert [re.sub(r"-[a-z0-9_]{8}", "-X", name) for name in left] == [
            named[role] for role in scratch
        ]


def test_a_temporary_report_left_by_a_kill_is_removed_by_the_next_write_there(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    # Enough cases that writing the HTML page takes long enough to be caught in the middle.
    rows = (json.dumps({"name": f"c{i}", "output": str(i), "expected": i}) for i in range(20000))
    write("data.jsonl", "\n".join(rows) + "\n")
    write("suite.yaml", "name: big\ngraders: [{kind: numeric}]\ndataset: data.jsonl\n")
    write("quick.yaml", QUICK_SUITE)
    out = tmp_path / "out"
    process = start(tmp_path, "suite.yaml", "--quiet", "--html", "out/r.html")
    with killed_at_the_end(tmp_path / "no-pids", process):

        def writing() -> bool:
            # With content: the run's start-up check of the path makes and removes an empty one.
            if not out.exists():
                return False
            for name in os.listdir(out):
                with contextlib.suppress(FileNotFoundError):
                    if name.endswith(".tmp") and (out / name).stat().st_size > 0:
                        return True
            return False

        wait_until(process, writing, "the HTML report's temporary file")
        process.kill()
        said = process.communicate()
    left_over = os.listdir(out)
    assert len(left_over) == 1, (left_over, process.returncode, said)  # what the run said
    (left,) = left_over
    done = gradekit("run", "quick.yaml", "--quiet", "-o", "out/q.json")
    assert done.returncode == 0, done.stderr
    assert os.listdir(out) == ["q.json"]
    assert re.fullmatch(rf"\.r\.html\.gradekit-tmp-{process.pid}-[a-z0-9_]{{8}}\.tmp", left)
