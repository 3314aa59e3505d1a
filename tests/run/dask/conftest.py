"""A real Dask cluster for the executor's tests: a `LocalCluster` of two worker processes on
127.0.0.1, started once per test module, with its client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes (one thread each) under nannies, which restart a killed one.
    Not daemonic, as docs/dask.md asks of workers, so graders can run under process
    isolation."""
    import dask

    with (
        dask.config.set({"distributed.worker.daemon": False}),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as local,
    ):
        yield local


@pytest.fixture
def client(cluster: Any) -> Iterator[Any]:
    """A client of the cluster, once both workers are up (a test may have killed one)."""
    with distributed.Client(cluster.scheduler_address) as connected:
        connected.wait_for_workers(2, timeout=60)
        yield connected
