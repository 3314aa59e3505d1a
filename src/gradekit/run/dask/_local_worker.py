"""Set-up of the workers of the local cluster a `DaskExecutor` starts (a Dask preload).

A terminal's Ctrl-C reaches every process of its foreground group, the local cluster's worker
processes too: they would print tracebacks and die mid-batch. The driver stops the run, takes
the batches that finished and closes the cluster itself, so its workers ignore SIGINT (as
gradekit's process-isolation children do).
"""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["dask_setup"]


def dask_setup(worker: Any) -> None:
    """Called by Dask in each worker process as it starts."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
