"""Imported only by process isolation's fork server (a preload, see `gradekit.run.isolation`):
its children then start with Ctrl-C ignored, since the server hands them the handlers it had
before it set its own. The parent decides when a child stops, and kills it.

Never imported by gradekit itself, so importing gradekit changes no signal handler.
"""

from __future__ import annotations

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
