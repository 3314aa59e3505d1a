"""Keeping the API key out of a judge call's errors; the errors themselves (in
`gradekit._errors`, re-exported here) each become the `error` of a result, never a raise out of a
grade: `JudgeHTTPError: the judge at URL answered HTTP 401 (...)`.

Messages never hold the API key: every text that came from the server or from the transport
passes through `redact` first (see _client.py; `_key` holds the rule).
"""

from __future__ import annotations

from gradekit._errors import (
    JudgeConnectionError,
    JudgeError,
    JudgeHTTPError,
    JudgeReplyError,
    JudgeTimeoutError,
)
from gradekit.graders.prompt._key import redact

__all__ = [
    "JudgeConnectionError",
    "JudgeError",
    "JudgeHTTPError",
    "JudgeReplyError",
    "JudgeTimeoutError",
    "redact",
]
