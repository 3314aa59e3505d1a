"""The machinery of the `prompt` kind (LLM-as-judge): prompt, HTTP, replies, cache, limits.

Modules, each one idea: `_budget` (run-wide settings, the limit on calls in flight, the
statistics), `_key` (the API key: read, checked, redacted), `_client` (HTTP, retries),
`_session` (the httpx client of each event loop), `_providers` (OpenAI and Anthropic wire
formats), `_prompt` and `_sections` (what the judge is told and shown), `_reply`, `_locate`
and `_logprobs` (reading a score out of a reply), `_cache` (replies on disk), `_calls` (one
call), `_grade` and `_outcome` (one grade). Only `_client` and `_session` import httpx, and
nothing here is imported by `import gradekit`.

What a caller of a run uses: `configure` before it, `statistics` after it (the command line
puts them in the report's summary as `judge`).

May import: the core modules, `gradekit.graders` helpers, httpx (in `_client` and `_session`).
"""

from __future__ import annotations

from typing import TextIO

from gradekit.graders.prompt.shared import (
    JudgeSettings,
    JudgeStatistics,
    configure,
    current_settings,
    statistics,
)

__all__ = [
    "JudgeSettings",
    "JudgeStatistics",
    "configure",
    "current_settings",
    "print_statistics",
    "statistics",
]


def print_statistics(stream: TextIO) -> None:
    """The judge line of the end-of-run summary; nothing when no judge ran."""
    stats = statistics()
    if stats is not None:
        print(stats.describe(), file=stream)
