"""The driver's side of a Dask run: the cluster (`DaskExecutor`) and one run on it (`DaskRun`).

`DaskExecutor` is the cluster a run grades on: a scheduler's address, a client of your own, or
a local cluster (its workers set up by `gradekit.run.dask.worker.dask_setup`), connected when
needed and closed after. Its `start_run` gives the run's `DaskRun`.

`DaskRun`: a thread of its own reads the suite's cases lazily, packs them into batches (one blob
each, see `gradekit.run.dask.pack`), submits each batch as one task, and hands the reports that
come back to the caller's thread through a queue, as the local runner does, so `on_case`,
counting, the results log and every report are the driver's alone. At most two batches per
worker thread are in flight, and cases read but not yet handed over are bounded, so a dataset
of millions of lines is never held whole.

A worker lost mid-batch: the scheduler runs the task again on another worker (up to its
`allowed-failures`); a task is one batch and its result is taken once, when its future
finishes, so no case is lost or counted twice. A batch whose workers all died is reported as
errored cases that say so. A scheduler left with no worker at all (every one lost, none
restarted) holds the batches forever: after the executor's `worker_timeout` without a worker
the run ends with ExecutorError, the results log keeping every case handed over.

Imports the core, `gradekit.report` (the reports that come back), `gradekit.run.grade`,
`gradekit.run.settings`, `gradekit.suite.model`, and `pack` and `worker` of this package;
`distributed` only when an executor connects.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import threading
import time
from typing import TYPE_CHECKING, Any, Final

from gradekit.core.errors import ExecutorError
from gradekit.core.types import error_text
from gradekit.registry.entries import PeerWarnings
from gradekit.report.json import FinishedCase
from gradekit.report.model import CaseReport
from gradekit.report.summary import SummaryBuilder
from gradekit.run.dask.pack import (
    CannotSend,
    CasePacker,
    CaseSource,
    LineBatch,
    case_texts,
    line_cases,
    routed_texts,
    suite_spec,
    unpack_reports,
)
from gradekit.run.dask.worker import grade_lines, grade_packed
from gradekit.run.grade import unloadable
from gradekit.run.settings import Settings
from gradekit.suite.model import Case, Suite

if TYPE_CHECKING:
    from gradekit.run.executor import Receive, Routed

__all__ = [
    "FIRST_BATCH_SIZE",
    "MAX_BATCH_SIZE",
    "SCHEDULER_ENV",
    "WORKER_TIMEOUT",
    "DaskExecutor",
    "DaskRun",
]

SCHEDULER_ENV: Final = "GRADEKIT_DASK_SCHEDULER"
"""The environment variable naming the Dask scheduler when none is given."""

WORKER_TIMEOUT: Final = 300.0
"""Seconds a run waits while its scheduler has no worker before it ends (`--dask-timeout`)."""


MAX_BATCH_SIZE: Final = 2048
"""Most cases in one batch: a lost worker costs at most this many cases graded again, and
progress comes at least this often."""

FIRST_BATCH_SIZE: Final = 32
"""The first batch when the number of cases is not known; each next one doubles."""

BATCHES_PER_THREAD: Final = 4
"""When the number of cases is known: batches made per worker thread (load balance)."""

_CASES, _DONE, _FAILED = "cases", "done", "failed"

_Batch = list[tuple[int, str, int | None]]
"""(position, case name, attempt index) of each case of a batch, in the batch's order."""


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
                    preload=["gradekit.run.dask.worker"],
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
        self,
        suite: Suite,
        settings: Settings,
        jobs: int,
        *,
        keep: bool,
        encode: bool = False,
        routed: Routed | None = None,
    ) -> DaskRun:
        """The run of `suite` on this cluster (connected first if need be, and then closed
        when the run ends). Raises ExecutorError when the suite cannot be sent. The workers
        always send the reports back, whether or not the run `keep`s them; where the run
        writes only the cases' texts (`encode`), the texts are handed on as they came; with
        `routed`, the dataset's lines are sent as the file holds them
        (`gradekit.run.dask.pack`)."""
        packer = CasePacker(suite)
        dataset = None if routed is None else routed.cases.dataset
        try:
            spec = suite_spec(suite, settings, jobs, packer, dataset)
        except CannotSend as error:
            raise ExecutorError(str(error)) from None
        opened = not self.connected
        self.connect()
        return DaskRun(
            self, suite, spec, packer, close_after=opened, keep=keep, encode=encode, routed=routed
        )


class DaskRun:
    """One run of `suite` on the cluster of `executor` (the runner's `Execution`)."""

    def __init__(
        self,
        executor: DaskExecutor,
        suite: Suite,
        spec: bytes,
        packer: CasePacker,
        *,
        close_after: bool,
        keep: bool = True,
        encode: bool = False,
        routed: Routed | None = None,
    ) -> None:
        self._executor = executor
        self._routed = routed
        self._client = executor.client
        self._suite = suite
        self._spec = spec
        self._packer = packer
        self._close_after = close_after
        # Whether the run's cases are read only as texts (a JSON report, a results log, the
        # stream's spool) or not at all: each is then handed on as the text the worker wrote,
        # its report not made again.
        self._texts = encode or not keep
        self._out: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._room = threading.Condition()
        self._pending = 0  # cases read and not yet handed over
        self._stopping = False
        self._threads = 1
        self._threads_at = 0.0
        self._alone_since: float | None = None  # when the scheduler was seen with no worker

    # -- the caller's thread -----------------------------------------------------------------

    def start(self) -> None:
        """Start the driver thread."""
        threading.Thread(target=self._thread, name="gradekit-dask", daemon=True).start()

    def deliver(self, receive: Receive, deadline: float = 0.0) -> None:
        """Hand finished cases to `receive` until the run ends (or `deadline` passes)."""
        while True:
            wait = 0.25 if not deadline else deadline - time.monotonic()
            if deadline and wait <= 0:
                return
            try:
                what, value = self._out.get(timeout=wait)
            except queue.Empty:
                continue
            if what == _CASES:
                items, counted, total = value  # total: the cases the items hold
                receive(items, counted)
                with self._room:
                    self._pending -= total
                    self._room.notify_all()
            elif what == _DONE:
                return
            elif not self._stopping:  # after a stop, whatever ended the driver is moot
                raise value
            else:
                return

    def stop(self) -> None:
        """Cancel the run: finished batches are still handed over, the others cancelled."""
        with self._room:
            self._stopping = True
            self._room.notify_all()

    # -- the driver's thread -----------------------------------------------------------------

    def _thread(self) -> None:
        try:
            self._main()
        except BaseException as error:
            self._finish_thread((_FAILED, error))
        else:
            self._finish_thread((_DONE, None))

    def _finish_thread(self, message: tuple[str, Any]) -> None:
        if self._close_after:
            try:
                self._executor.close()
            except Exception as error:  # the run's outcome matters more than the cluster's
                if message[0] == _DONE:
                    message = (_FAILED, ExecutorError(f"closing the cluster: {error_text(error)}"))
        self._out.put(message)

    def _main(self) -> None:
        source = CaseSource(self._suite, self._routed)
        in_flight: dict[Any, _Batch | LineBatch] = {}
        finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
        size = self._first_size()
        exhausted = False
        try:
            while True:
                while not exhausted and not self._stopping and len(in_flight) < self._slots():
                    self._wait_for_room(size)
                    if self._stopping:
                        break
                    batch, future = self._read(source, size)
                    exhausted = batch is None
                    if future is not None and batch is not None:
                        in_flight[future] = batch
                        future.add_done_callback(finished.put)
                        size = self._next_size(size)
                if self._stopping or not in_flight:
                    break
                try:
                    future = finished.get(timeout=0.25)
                except queue.Empty:
                    self._check_workers()
                    continue
                if future in in_flight:  # each batch's result is taken once
                    self._take(future, in_flight.pop(future))
            # Stopped: the batches that finished meanwhile still count.
            for future in [f for f in in_flight if f.status == "finished"]:
                self._take(future, in_flight.pop(future))
        finally:
            source.close()
            if in_flight:
                self._client.cancel(list(in_flight))

    def _read(self, source: CaseSource, size: int) -> tuple[_Batch | LineBatch | None, Any]:
        """Up to `size` cases read and sent: the batch and its future (None when none of them
        could be sent: they were handed over at once as errored). No batch: the suite has no
        more cases."""
        taken = source.take(size)
        if taken is None:
            return None, None
        if isinstance(taken, LineBatch):
            with self._room:
                self._pending += taken.total
            future = self._client.submit(
                grade_lines, self._spec, taken.first, taken.lines, pure=False
            )
            return taken, future
        with self._room:
            self._pending += len(taken)
        batch: _Batch = []
        lines: list[bytes] = []
        unsent: list[tuple[int, CaseReport]] = []
        for position, case in taken:
            if case.error is not None:
                unsent.append((position, unloadable(case)))
                continue
            try:
                lines.append(self._packer.line(case))
            except CannotSend as error:
                failed = Case(case.name, (), error=str(error), attempt=case.attempt)
                unsent.append((position, unloadable(failed)))
                continue
            batch.append((position, case.name, case.attempt))
        if unsent:
            self._out.put((_CASES, (unsent, None, len(unsent))))
        if not batch:
            return batch, None
        future = self._client.submit(grade_packed, self._spec, b"\n".join(lines), pure=False)
        return batch, future

    def _take(self, future: Any, batch: _Batch | LineBatch) -> None:
        """Hand over the cases of a finished batch, with the summary the worker counted
        (errored cases, uncounted, if its task failed)."""
        if future.status == "cancelled":
            raise ExecutorError(
                "the Dask cluster cancelled a batch (the scheduler was lost or restarted); "
                "the results log keeps every finished case: run again with --resume"
            )
        if isinstance(batch, LineBatch):
            self._take_lines(future, batch)
            return
        positions = [position for position, _, _ in batch]
        counted: SummaryBuilder | None = None
        try:
            found = future.result()
            if isinstance(found, bytes):  # a worker refused the batch (any version): why
                cases: list[FinishedCase] = _refused(_all_of(unpack_reports(found), batch), batch)
            elif self._texts:  # `case_texts` checks that every case came back
                cases = list(case_texts(found, [(name, attempt) for _, name, attempt in batch]))
                counted = found.summary
            else:
                cases = list(_all_of(unpack_reports(found.reports), batch))
                counted = found.summary
        except Exception as error:
            text = _batch_error(error)
            cases = [
                unloadable(Case(name, (), error=text, attempt=attempt))
                for _, name, attempt in batch
            ]
            counted = None
        self._out.put((_CASES, (list(zip(positions, cases, strict=True)), counted, len(cases))))

    def _take_lines(self, future: Any, batch: LineBatch) -> None:
        """Hand over the cases of a finished batch of lines, counted, the kinds and warnings of
        their lines noted (errored cases, uncounted, if its task failed: those built here)."""
        counted: SummaryBuilder | None = None
        try:
            found = future.result()
            if isinstance(found, bytes):  # a worker refused the batch: why, for each case
                named = self._named(batch)
                cases: list[FinishedCase] = _refused(_all_of(unpack_reports(found), named), named)
            else:  # the batch's texts handed on as one, as they came
                texts = routed_texts(found, batch.total)
                counted = found.batch.summary
                assert self._routed is not None
                self._routed.note_kinds(found.kinds)
                warnings = self._suite.warnings
                if isinstance(warnings, PeerWarnings):
                    for key, line in found.warnings:
                        warnings.add(key, line)
                self._out.put((_CASES, ([(batch.start, texts)], counted, batch.total)))
                return
        except Exception as error:
            text = _batch_error(error)
            cases = [
                unloadable(Case(name, (), error=text, attempt=attempt))
                for _, name, attempt in self._named(batch)
            ]
            counted = None
        positions = range(batch.start, batch.start + batch.total)
        self._out.put((_CASES, (list(zip(positions, cases, strict=True)), counted, len(cases))))

    def _named(self, batch: LineBatch) -> _Batch:
        """(position, name, attempt) of each case of a batch of lines, built here to name
        them (a batch that failed)."""
        assert self._routed is not None and self._routed.cases.dataset is not None
        built = line_cases(self._routed.cases.dataset, batch.first, batch.lines)
        return [(batch.start + at, case.name, case.attempt) for at, case in enumerate(built)]

    def _wait_for_room(self, size: int) -> None:
        """Wait while the cases read and not yet handed over fill the window."""
        window = (self._slots() + 2) * size
        with self._room:
            while self._pending >= window and not self._stopping:
                self._room.wait(0.25)
                self._check_workers()

    def _worker_threads(self) -> int:
        """Threads of the cluster's workers (asked of the scheduler at most once a second);
        at least 1, for the sizes made from it."""
        now = time.monotonic()
        if now - self._threads_at >= 1.0:
            threads = sum(self._client.nthreads().values())
            self._threads = max(1, threads)
            self._threads_at = now
            if threads:
                self._alone_since = None
            elif self._alone_since is None:
                self._alone_since = now
        return self._threads

    def _check_workers(self) -> None:
        """Raise ExecutorError once the scheduler has had no worker for `worker_timeout`."""
        self._worker_threads()
        seconds = self._executor.worker_timeout
        if self._alone_since is None or time.monotonic() - self._alone_since < seconds:
            return
        raise ExecutorError(
            f"no Dask worker has been connected to the scheduler for {seconds:g} s "
            "(--dask-timeout): every worker was lost; the results log keeps every finished "
            "case: start workers and run again with --resume"
        )

    def _slots(self) -> int:
        return 2 * self._worker_threads()

    def _first_size(self) -> int:
        fixed = self._executor.batch_size
        if fixed is not None:
            return fixed
        count = self._suite.case_count
        if count is None:
            return FIRST_BATCH_SIZE
        wanted = math.ceil(count / (BATCHES_PER_THREAD * self._worker_threads()))
        return max(1, min(MAX_BATCH_SIZE, wanted))

    def _next_size(self, size: int) -> int:
        if self._executor.batch_size is not None or self._suite.case_count is not None:
            return size
        return min(MAX_BATCH_SIZE, size * 2)


def _all_of(reports: list[CaseReport], batch: _Batch) -> list[CaseReport]:
    """`reports`, one for each case of `batch`; else an ExecutorError saying so."""
    if len(reports) != len(batch):
        raise ExecutorError(
            f"a worker returned {len(reports)} reports for a batch of {len(batch)} cases"
        )
    return reports


def _refused(reports: list[CaseReport], batch: _Batch) -> list[FinishedCase]:
    """The errored cases of a batch a worker refused (a report for each case), each with the
    worker's reason and the name and attempt index it was sent with."""
    return [
        unloadable(Case(name, (), error=report.error or "refused by the worker", attempt=attempt))
        for report, (_, name, attempt) in zip(reports, batch, strict=True)
    ]


def _batch_error(error: BaseException) -> str:
    """The error of every case of a batch whose task failed."""
    text = error_text(error)
    if type(error).__name__ == "KilledWorker":
        return (
            f"{text}; the workers grading this batch died: a grader crashes or exhausts its "
            "process (run it with isolation: process, or give the workers more memory)"
        )
    return (
        f"{text} (grading this batch on the Dask cluster; every worker needs gradekit and the "
        "suite's grader packs installed)"
    )
