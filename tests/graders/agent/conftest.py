"""The agent-grader tests use the fixtures of tests/support/process_fixtures.py
(workspaces written as real files, process checks)."""

from __future__ import annotations

from process_fixtures import gone, workspace

__all__ = ["gone", "workspace"]
