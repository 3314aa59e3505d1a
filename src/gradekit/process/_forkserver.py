"""Imported only by the warm workers' fork server (a preload, see `gradekit.process.workers`):
its children then start with Ctrl-C ignored, since the server hands them the handlers it had
before it set its own. The parent decides when a worker stops, and kills it.

A module of its own, small because importing it is what changes the handler: never
imported by gradekit itself, so importing gradekit changes no signal handler.
Imports: nothing of gradekit.
"""

from __future__ import annotations

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
