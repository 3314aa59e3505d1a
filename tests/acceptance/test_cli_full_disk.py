"""A full disk, for real (a 64 KiB tmpfs): a write failure is one line naming the path and the
cause, exit 3, every other report is still written, and the results log stays resumable."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import Run
from tmpfs import small_tmpfs

import gradekit
from gradekit import WriteError
from gradekit.report.json import read_cases

Write = Callable[[str, str], Path]
CASES = 600


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a tmpfs of 64 KiB, unmounted after the test."""
    with small_tmpfs(tmp_path / "disk", "64k") as folder:
        yield folder


def _grow(folder: Path) -> None:
    subprocess.run(["mount", "-o", "remount,size=8m", str(folder)], check=True)


def _big_suite(write: Write) -> None:
    rows = (
        json.dumps({"name": f"c{i:04d}", "output": str(i), "expected": i}) for i in range(CASES)
    )
    write("data.jsonl", "\n".join(rows) + "\n")
    write("suite.yaml", "name: big\ngraders: [{kind: numeric}]\ndataset: data.jsonl\n")


def _logged(path: Path) -> list[str]:
    return [case.name for _, case in read_cases(path)]  # raises on a line that is not whole


def test_a_full_disk_under_the_results_log(
    gradekit: Run, write: Write, tmp_path: Path, disk: Path
) -> None:
    _big_suite(write)
    args = ("run", "suite.yaml", "--resume", "disk/r.jsonl", "-o", "out/r.json", "--junit", "r.xml")
    done = gradekit(*args, "--quiet")
    assert done.returncode == 3
    assert done.stderr == (
        "gradekit: cannot write the results log disk/r.jsonl: No space left on device; free "
        "some space, then run again with the same log to resume: every case it holds is kept\n"
    )
    logged = _logged(disk / "r.jsonl")
    assert 0 < len(logged) < CASES
    assert (disk / "r.jsonl").read_bytes().endswith(b"\n")  # the line that did not fit: gone
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert (report["complete"], report["summary"]["cases"]) == (False, len(logged))
    assert [case["name"] for case in report["cases"]] == sorted(logged)
    assert (tmp_path / "r.xml").read_text().count("<testcase ") == len(logged)

    _grow(disk)
    done = gradekit(*args, "--quiet")
    assert done.returncode == 0, done.stderr
    assert sorted(_logged(disk / "r.jsonl")) == [f"c{i:04d}" for i in range(CASES)]
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert (report["complete"], report["summary"]["passed"]) == (True, CASES)


def test_a_full_disk_under_one_report_spares_the_others(
    gradekit: Run, mixed_suite: Path, tmp_path: Path, disk: Path
) -> None:
    with contextlib.suppress(OSError), open(disk / "filler", "wb") as filler:
        while True:
            filler.write(b"x" * 4096)
            filler.flush()
    done = gradekit(
        "run", "suite.yaml", "-o", "disk/r.json", "--junit", "r.xml", "--resume", "r.jsonl", "-q"
    )
    assert done.returncode == 3
    assert done.stderr == (
        "gradekit: cannot write disk/r.json: No space left on device; free some space on that "
        "disk, or choose another path\n"
    )
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]  # no temporary file left
    assert (tmp_path / "r.xml").read_text().count("<testcase ") == 4
    assert len(_logged(tmp_path / "r.jsonl")) == 4


def test_run_suite_stops_with_the_report_of_what_the_log_holds(write: Write, disk: Path) -> None:
    _big_suite(write)
    suite = gradekit.load_suite(str(disk.parent / "suite.yaml"))
    with pytest.raises(WriteError) as raised:
        gradekit.run_suite(
            suite, resume=disk / "r.jsonl", outputs=gradekit.Outputs(keep_cases=True)
        )
    report = raised.value.report
    logged = _logged(disk / "r.jsonl")
    assert report.complete is False
    assert [case.name for case in report.cases] == sorted(logged)
    assert report.summary.cases == len(logged)
    assert raised.value.reason == "No space left on device"
