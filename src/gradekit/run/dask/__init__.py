"""The Dask executor: a run's cases graded on a Dask cluster, its reports written here.

Owns `DaskExecutor` (the cluster: a scheduler's address, a client of your own, or a local
cluster), the wire format of suites, cases and reports (`_pack`), the driver that sends
batches and takes each batch's results once (`_driver`), and the task that grades a batch on
a worker (`_worker`). `distributed` is imported only when an executor connects (driver) or a
task runs (worker): importing this package needs only gradekit.

May import: the rest of `run`, and `suite`, `registry`, `report` and `core`."""

from gradekit.run.dask._executor import WORKER_TIMEOUT, DaskExecutor

__all__ = ["WORKER_TIMEOUT", "DaskExecutor"]
