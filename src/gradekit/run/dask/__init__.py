"""The Dask executor: a run's cases graded on a Dask cluster, its reports written here.

Owns `DaskExecutor` and the driver that sends batches and takes each batch's results once
(`executor`), the wire format of suites, cases and reports and what the driver reads to send,
built cases or raw dataset lines (`pack`), and each worker's set-up
and the task that grades a batch on it (`worker`). `distributed` is imported only when an
executor connects (driver) or a task runs (worker): importing this package needs only gradekit.

May import: the rest of `run` (`collect`, the local run a worker grades a batch with;
`grade`, `settings`, `exits`, and `executor`, the protocol), and `suite`, `registry`,
`report` and `core`. Never the runner nor the `gradekit` facade: the runner imports this
package (`run_suite(executor="dask")`), not the reverse.
"""

from gradekit.run.dask.executor import WORKER_TIMEOUT, DaskExecutor

__all__ = ["WORKER_TIMEOUT", "DaskExecutor"]
