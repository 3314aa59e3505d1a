"""`gradekit run -o` on a Dask cluster whose driver only routes: the dataset's lines go to the
workers as the file holds them, the workers build, grade and encode the cases, and every
report the command writes is the local run's (but for the timings), against a real two-process
LocalCluster. The command runs this checkout's gradekit (its source first on `PYTHONPATH`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from dask_suites import (
    SLOW_CASES,
    assert_no_case_lost_or_doubled,
    killing_the_worker_grading,
    write_graders,
    write_mixed_suite,
)
from dask_suites import gradekit as command

import gradekit

SOURCE = str(Path(gradekit.__file__).resolve().parents[1])

TIMINGS = [
    (re.compile(r'"duration_ms": ?[-0-9.e]+'), '"duration_ms": 0'),
    (re.compile(r'"ms": ?\[[^\]]*\]'), '"ms": []'),
    (re.compile(r'(time|timestamp)="[^"]*"'), r'\1=""'),
    (re.compile(r" *[0-9.]+ (ms|s)\b"), " T"),  # a table's column aligned to it too
]


def untimed(text: str) -> str:
    for pattern, replacement in TIMINGS:
        text = pattern.sub(replacement, text)
    return text


def every_report(
    folder: Path, side: str, scheduler: str | None, *, log: bool = False
) -> dict[str, Any]:
    """The exit code, stderr and every report of one `gradekit run`, timings blanked (with
    `log`, its results log too, in suite order: the cases are logged as they finish)."""
    names = {"json": "-o", "xml": "--junit", "md": "--markdown", "html": "--html"}
    args = ["suite.yaml", *(["--resume", f"{side}.jsonl"] if log else [])]
    for extension, option in names.items():
        args += [option, f"{side}.{extension}"]
    if scheduler is not None:
        args += ["--executor", "dask", "--scheduler", scheduler]
    done = command("run", *args, cwd=folder, env={"PYTHONPATH": SOURCE})
    found: dict[str, Any] = {"exit": done.returncode}
    # Progress lines come as time passes: what the command says besides them must be the same.
    said = [line for line in done.stderr.splitlines() if not line.startswith("graded ")]
    found["stderr"] = untimed("\n".join(said).replace(side, "SIDE"))
    found["stdout"] = untimed(done.stdout.replace(side, "SIDE"))  # the failing cases listed
    for extension in names:
        found[extension] = untimed((folder / f"{side}.{extension}").read_text(encoding="utf-8"))
    if log:
        lines = (folder / f"{side}.jsonl").read_text(encoding="utf-8").splitlines()
        found["log"] = sorted(untimed(line) for line in lines)
    return found


def test_every_report_of_a_routed_run_is_the_local_run_s(cluster: Any, tmp_path: Path) -> None:
    # Cases of the suite file (sent built, one of them under process isolation) and 300
    # dataset lines (sent as lines): a malformed line, lines with graders of their own.
    write_mixed_suite(tmp_path, f"route_graders_{os.getpid()}")
    local = every_report(tmp_path, "local", None)
    routed = every_report(tmp_path, "dask", cluster.scheduler_address)
    assert local["exit"] == 1, local["stderr"]
    assert routed == local
    data = json.loads((tmp_path / "dask.json").read_text(encoding="utf-8"))
    assert len(data["cases"]) == 306
    assert data["environment"]["kinds"].keys() == {"code", "contains", "numeric", "regex"}
    assert "data.jsonl:152" in [case["name"] for case in data["cases"]]  # the malformed line


def test_attempts_warnings_and_odd_lines_are_read_as_locally(cluster: Any, tmp_path: Path) -> None:
    # Blank lines, a peer framework's key (a warning), a BOM, a last line without its newline,
    # and a case's attempts after the first batches: from there the driver builds the lines.
    module = f"route_odd_{os.getpid()}"
    write_graders(tmp_path, module)
    lines = ["\ufeff" + json.dumps({"name": "first", "output": "2"})]
    for number in range(200):
        lines.append(json.dumps({"name": f"n{number}", "output": str(number)}))
        if number % 50 == 0:
            lines.append("   ")
    lines.append(json.dumps({"name": "peer", "output": "4", "ground_truth": "4"}))
    lines += [json.dumps({"name": "tries", "attempt": i, "output": str(i)}) for i in range(3)]
    lines.append(json.dumps({"name": "late", "attempt": 1, "output": "1"}))  # a gap: errored
    lines.append(json.dumps({"name": "last", "output": "8"}))
    (tmp_path / "data.jsonl").write_text("\n".join(lines), encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(
        f"name: odd\ngraders: [{{kind: code, grader: '{module}:parity'}}]\ndataset: data.jsonl\n",
        encoding="utf-8",
    )
    local = every_report(tmp_path, "local", None, log=True)
    routed = every_report(tmp_path, "dask", cluster.scheduler_address, log=True)
    assert routed == local
    assert len(local["log"]) == 207
    assert "ground_truth" in local["stderr"]
    data = json.loads((tmp_path / "dask.json").read_text(encoding="utf-8"))
    names = [case["name"] for case in data["cases"]]
    assert names[0] == "first" and names[-1] == "last" and len(names) == 207
    assert [case["errored"] for case in data["cases"] if case["name"] == "late"] == [True]


def test_a_worker_killed_mid_batch_of_lines_loses_and_doubles_no_case(
    cluster: Any, tmp_path: Path
) -> None:
    module = f"route_kill_{os.getpid()}"
    write_graders(tmp_path, module)
    with open(tmp_path / "data.jsonl", "w", encoding="utf-8") as data:
        for number in range(SLOW_CASES):
            data.write(json.dumps({"name": f"slow-{number}", "output": str(number)}) + "\n")
    (tmp_path / "suite.yaml").write_text(
        f"name: kill\ngraders: [{{kind: code, grader: '{module}:slow_parity'}}]\n"
        "dataset: data.jsonl\n",
        encoding="utf-8",
    )
    with killing_the_worker_grading(tmp_path, "slow-17", seconds=120) as killed:
        done = command(
            "run", "suite.yaml", "--executor", "dask", "--scheduler", cluster.scheduler_address,
            "-o", "out.json", "--junit", "out.xml", "--resume", "log.jsonl", cwd=tmp_path,
            env={"PYTHONPATH": SOURCE},
        )  # fmt: skip
    assert_no_case_lost_or_doubled(tmp_path, killed, done)
    junit = (tmp_path / "out.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase ") == SLOW_CASES
