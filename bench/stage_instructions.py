"""Instructions a case of each stage of `gradekit run --no-samples` costs, counted by callgrind.

On a shared machine CPU times move by 20% from one run to the next; the instructions a piece
of Python executes do not (to the hundred in a thousand cases). So this counts them: for each
source tree given and each stage, it runs a child under `valgrind --tool=callgrind` twice,
once only preparing the cases and once doing the stage's work `REPEATS` times over them, and
prints the difference per case. The stages, on the first `--cases` lines of the e2e dataset
(`bench/e2e.py --keep DIR`: equality + numeric + contains) and in the single thread:

- `read`: `Dataset.case_at` of each line (parse the JSON, build the Case);
- `grade`: `grade_batch` of the cases, reports kept, without samples (as `--no-samples`);
- `encode`: `case_json` of each case's report;
- `equality`, `numeric`, `contains`: that grader's `grade` of each case's sample;
- `verdict`: `tally(...).turn_decision(policy)` of each case's first results;
- `records`: a `ResultRecord` of each grade's result;
- `bound`: `bounded_record` of each of those records that has details, as `--no-samples`
  bounds them (the copies of the sample's texts left out: `numeric`'s result built again);
- `turn`: `turn_of` of each case's turn and records (the verdict, the bound, the `TurnReport`);
- `case`: `case_of` of each case and its turn (the case's decision and its `CaseReport`).

What this leaves out: the run's threads (the loop's and the caller's), the reports' writing
and the garbage collector (off in the child). Needs valgrind (`apt-get install valgrind`);
about a minute of CPU a stage and tree.

    .venv/bin/python bench/e2e.py --cases 20000 --rounds 1 --kinds equality,numeric,contains \
        --keep /tmp/e2e
    .venv/bin/python bench/stage_instructions.py --dataset /tmp/e2e \
        --tree /tmp/before/src --tree src [--stage read --stage grade ...]
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

STAGES = (
    "read",
    "grade",
    "encode",
    "equality",
    "numeric",
    "contains",
    "verdict",
    "records",
    "bound",
    "turn",
    "case",
)
REPEATS = 2
SUITE = "suite-equality-numeric-contains.yaml"


def child(dataset: str, stage: str, repeats: int, count: int) -> None:
    """Prepare the cases, reports and results, then do `stage` `repeats` times."""
    from gradekit.report.json import case_json
    from gradekit.report.model import ResultRecord, bounded_record
    from gradekit.run.grade import case_of, turn_of
    from gradekit.run.lanes import BatchState, grade_batch
    from gradekit.run.settings import Settings
    from gradekit.run.verdict import Decision, tally
    from gradekit.suite.dataset import DatasetAttempts
    from gradekit.suite.load import load_suite

    suite = load_suite(Path(dataset) / SUITE)
    source: Any = suite.cases
    lines = source.dataset.path.read_bytes().splitlines(keepends=True)[:count]
    read = source.dataset.case_at
    settings = Settings(max_text=None)
    gc.disable()
    attempts = DatasetAttempts()
    items = [(index, read(line, index + 1, attempts)) for index, line in enumerate(lines)]
    state = BatchState(keep=True)
    grade_batch(items, state, {}, settings, suite.policy)
    reports = [report for _, report in state.done]
    for report in reports:
        case_json(report)  # the JSON writer chosen and imported before counting

    def turn_decision(report: Any) -> Decision:
        turn = report.turns[0]
        return Decision(turn.passed, turn.score, turn.errored, False)

    records = [
        [ResultRecord(entry.grader.grade(case.turns[0].sample)) for entry in case.turns[0].graders]
        for _, case in items
    ]
    assembly = {
        "records": lambda: [[ResultRecord(r.result) for r in turn] for turn in records],
        "bound": lambda: [
            bounded_record(r, None) for turn in records for r in turn if r.result.details
        ],
        "turn": lambda: [
            turn_of(0, case.turns[0], turn, suite.policy, None)
            for (_, case), turn in zip(items, records, strict=True)
        ],
        "case": lambda: [
            case_of(case, report.turns, [turn_decision(report)], 0.0, None)
            for (_, case), report in zip(items, reports, strict=True)
        ],
    }
    for _ in range(repeats):
        if stage in assembly:
            assembly[stage]()
            continue
        if stage == "read":
            attempts = DatasetAttempts()
            for number, line in enumerate(lines, start=1):
                read(line, number, attempts)
        elif stage == "grade":
            grade_batch(items, unwatched(BatchState), {}, settings, suite.policy)
        elif stage == "encode":
            for report in reports:
                case_json(report)
        elif stage == "verdict":
            for (_, case), report in zip(items, reports, strict=True):
                results = [record.result for record in report.turns[0].results]
                tally(results, case.turns[0].graders).turn_decision(suite.policy)
        else:
            for _, case in items:
                turn = case.turns[0]
                for entry in turn.graders:
                    if entry.kind == stage:
                        entry.grader.grade(turn.sample)


def unwatched(batch_state: Any) -> Any:
    """A batch's state as the run makes it for a batch graded in the loop's own thread (no
    runner watches its grades); an older tree's, which has no such flag, as it is."""
    try:
        return batch_state(keep=True, watched=False)
    except TypeError:
        return batch_state(keep=True)


def instructions(tree: str, dataset: str, stage: str, repeats: int, count: int) -> int:
    """The instructions callgrind counts in a child doing `stage` `repeats` times."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--child",
        stage,
        str(repeats),
        "--dataset",
        dataset,
        "--cases",
        str(count),
    ]
    # One hash seed: string hashes move dicts' probes, and the counts by a thousand a case.
    env = {**os.environ, "PYTHONPATH": tree, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output:\n{done.stderr}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, help="a folder kept by e2e.py --keep")
    parser.add_argument("--tree", action="append", default=[], help="a gradekit src folder")
    parser.add_argument("--stage", action="append", choices=STAGES, default=[])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--child", nargs=2, metavar=("STAGE", "REPEATS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.dataset, args.child[0], int(args.child[1]), args.cases)
        return
    for stage in args.stage or STAGES:
        for tree in args.tree or ["src"]:
            base = instructions(tree, args.dataset, stage, 0, args.cases)
            work = instructions(tree, args.dataset, stage, REPEATS, args.cases)
            per_case = (work - base) / (REPEATS * args.cases)
            print(f"{stage:10s} {tree:40s} {per_case:10,.0f} instructions a case", flush=True)


if __name__ == "__main__":
    main()
