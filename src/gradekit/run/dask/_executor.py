"""`DaskExecutor`: the cluster a run grades on, connected when needed and closed after."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any, Final

from gradekit.core.errors import ExecutorError
from gradekit.core.types import error_text
from gradekit.run.dask._pack import CannotSend, CasePacker, suite_spec
from gradekit.run.settings import Settings
from gradekit.suite.model import Suite

if TYPE_CHECKING:
    from gradekit.run.dask._driver import DaskRun

__all__ = ["SCHEDULER_ENV", "WORKER_TIMEOUT", "DaskExecutor"]

SCHEDULER_ENV: Final = "GRADEKIT_DASK_SCHEDULER"
"""The environment variable naming the Dask scheduler when none is given."""

WORKER_TIMEOUT: Final = 300.0
"""Seconds a run waits while its scheduler has no worker before it ends (`--dask-timeout`)."""


class DaskExecutor:
    """Grades runs on a Dask cluster: `run_suite(suite, executor=DaskExecutor(...))`.

    `scheduler` is the scheduler's address (`tcp://host:8786`); without one, the environment
    variable `GRADEKIT_DASK_SCHEDULER`, else a local cluster of `workers` processes (default:
    one per CPU) on 127.0.0.1, started when the executor connects. `client` is a
    `distributed.Client` of your own to use instead (a dask-kubernetes or dask-jobqueue
    cluster's); it is never closed here. `batch_size` is the number of cases sent to a worker
    at once (default: about four batches per worker thread, between 1 and 2048). `timeout` is
    how long to wait for the scheduler, in seconds. `worker_timeout` is how long a run waits,
    in seconds, while the scheduler has no worker at all (every one lost, none started) before
    it ends with ExecutorError (default `WORKER_TIMEOUT`, 5 minutes); the results log keeps
    every case that finished.

    As a context manager it connects on entry and closes on exit, serving every run inside;
    a run given an executor that is not connected connects it and closes it after.
    Needs the `distributed` package: `pip install 'gradekit[dask]'`.
    """

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        client: Any = None,
        workers: int | None = None,
        batch_size: int | None = None,
        timeout: float = 10.0,
        worker_timeout: float = WORKER_TIMEOUT,
    ) -> None:
        if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
            raise ValueError(
                f"scheduler must be an address such as tcp://host:8786, got {scheduler!r}"
            )
        if scheduler is not None and client is not None:
            raise ValueError("give a scheduler address or a client, not both")
        for label, value in (("workers", workers), ("batch_size", batch_size)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ValueError(f"{label} must be a whole number >= 1, got {value!r}")
        for label, seconds in (("timeout", timeout), ("worker_timeout", worker_timeout)):
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, (int, float))
                or not 0 < seconds < float("inf")
            ):
                raise ValueError(f"{label} must be a number of seconds > 0, got {seconds!r}")
        self.scheduler = scheduler
        self.workers = workers
        self.batch_size = batch_size
        self.timeout = float(timeout)
        self.worker_timeout = float(worker_timeout)
        self._given = client
        self._client: Any = client
        self._cluster: Any = None
        self._config: Any = None

    @property
    def client(self) -> Any:
        """The `distributed.Client` in use (None until connected)."""
        return self._client

    @property
    def connected(self) -> bool:
        """Whether the executor holds a client (given, or made by `connect`)."""
        return self._client is not None

    def connect(self) -> DaskExecutor:
        """Connect to the scheduler, or start the local cluster; raises ExecutorError when
        `distributed` is missing or the scheduler cannot be reached."""
        if self._client is not None:
            return self
        try:
            import distributed
        except ImportError as error:
            raise ExecutorError(
                f"the dask executor needs the distributed package ({error_text(error)}); "
                "install it with pip install 'gradekit[dask]'"
            ) from error
        import dask as dask_package

        dist: Any = distributed  # untyped: its calls are checked when they run
        dask_config: Any = dask_package.config
        address = self.scheduler or os.environ.get(SCHEDULER_ENV) or None
        if address is None:
            # Worker processes that may start children, for graders under process isolation
            # (a restarted worker reads this too: it is undone when the cluster closes).
            self._config = dask_config.set({"distributed.worker.daemon": False})
            try:
                self._cluster = dist.LocalCluster(
                    n_workers=self.workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    preload=["gradekit.run.dask._local_worker"],
                    # Its workers' logs (a cancelled task, a heartbeat to a scheduler that is
                    # closing after Ctrl-C) are not the user's business; gradekit reports what
                    # matters in the run's results (a lost worker's batch is retried).
                    silence_logs=logging.CRITICAL,
                )
                self._client = dist.Client(self._cluster, timeout=self.timeout)
            except Exception as error:
                self.close()
                raise ExecutorError(
                    f"cannot start a local Dask cluster: {error_text(error)}; give the address "
                    "of a running scheduler instead (--scheduler or " + SCHEDULER_ENV + ")"
                ) from error
            return self
        try:
            self._client = dist.Client(address, timeout=self.timeout)
        except Exception as error:
            raise ExecutorError(
                f"cannot reach the Dask scheduler at {address}: {error_text(error)}; check the "
                f"address (--scheduler or {SCHEDULER_ENV}) and that the scheduler is running"
            ) from error
        return self

    def close(self) -> None:
        """Close the client and stop the local cluster this executor made (a client given to
        it is left open)."""
        client, cluster, config = self._client, self._cluster, self._config
        self._cluster = self._config = None
        try:
            if client is not None and client is not self._given:
                self._client = None
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            if config is not None:
                config.__exit__(None, None, None)

    def __enter__(self) -> DaskExecutor:
        return self.connect()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start_run(
        self, suite: Suite, settings: Settings, jobs: int, *, keep: bool, encode: bool = False
    ) -> DaskRun:
        """The run of `suite` on this cluster (connected first if need be, and then closed
        when the run ends). Raises ExecutorError when the suite cannot be sent. The workers
        always send the reports back, whether or not the run `keep`s them; where the run
        writes only the cases' texts (`encode`), the texts are handed on as they came."""
        from gradekit.run.dask._driver import DaskRun

        packer = CasePacker(suite)
        try:
            spec = suite_spec(suite, settings, jobs, packer)
        except CannotSend as error:
            raise ExecutorError(str(error)) from None
        opened = not self.connected
        self.connect()
        return DaskRun(self, suite, spec, packer, close_after=opened, keep=keep, encode=encode)
