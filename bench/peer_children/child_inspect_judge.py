"""inspect_ai's judge (`model_graded_qa`) on `calls` samples against the bench's local server.

Run in inspect_ai's own virtual environment (bench/peers.py installs it) by bench/judge.py,
which times this whole process as it times `gradekit run` with a `prompt` grader:

    python child_inspect_judge.py BASE_URL CALLS CONCURRENCY LOG_DIR

The samples' answers are set by a solver that generates nothing (as gradekit's cases carry
their outputs), and the grader model is `openai-api/bench/bench-judge` at BASE_URL, with
`max_connections` = CONCURRENCY: every call goes to the server, none to a real model.
"""

from __future__ import annotations

import os
import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import Generate, TaskState, solver


@solver
def answered():
    """Give each sample its answer (its target), as gradekit's cases carry theirs."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("none/none", state.target.text)
        return state

    return solve


def main() -> None:
    base_url, calls, concurrency, log_dir = sys.argv[1:5]
    os.environ["BENCH_BASE_URL"] = base_url
    os.environ["BENCH_API_KEY"] = "none"
    samples = [
        Sample(input=f"What is {i} x 7?", target=str(i * 7), id=i) for i in range(int(calls))
    ]
    task = Task(
        dataset=samples,
        solver=answered(),
        scorer=model_graded_qa(model="openai-api/bench/bench-judge"),
    )
    logs = eval(
        task,
        model="mockllm/model",
        max_connections=int(concurrency),
        max_samples=int(concurrency),
        log_dir=log_dir,
        display="none",
    )
    if logs[0].status != "success":
        raise SystemExit(f"inspect_ai's eval ended {logs[0].status}: {logs[0].error}")


if __name__ == "__main__":
    main()
