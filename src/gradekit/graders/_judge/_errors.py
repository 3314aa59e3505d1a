"""The errors of a judge call. Each becomes the `error` of a result, never a raise out of a
grade: `JudgeHTTPError: the judge at URL answered HTTP 401 (...)`.

Messages never hold the API key: every text that came from the server or from the transport
passes through `redact` first (see _client.py).
"""

from __future__ import annotations

from gradekit import GradekitError

__all__ = [
    "JudgeConnectionError",
    "JudgeError",
    "JudgeHTTPError",
    "JudgeReplyError",
    "JudgeTimeoutError",
    "redact",
]

REDACTED = "[redacted]"


class JudgeError(GradekitError, RuntimeError):
    """A judge call that gave no usable judgement."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


class JudgeHTTPError(JudgeError):
    """The judge's server answered with an HTTP error (after any retries). `status` is the
    HTTP status code."""

    def __init__(self, message: str, status: int) -> None:
        self.status = status
        super().__init__(message)


class JudgeTimeoutError(JudgeError, TimeoutError):
    """No reply within the grader's `timeout` (or `request_timeout`, after the retries)."""


class JudgeConnectionError(JudgeError, ConnectionError):
    """The judge's server could not be reached, or dropped the connection (after retries)."""


class JudgeReplyError(JudgeError, ValueError):
    """The judge answered, but its reply holds no usable score (or no logprobs, when asked)."""


def redact(text: str, secret: str | None) -> str:
    """`text` with every occurrence of `secret` replaced by `[redacted]`."""
    if not secret:
        return text
    return text.replace(secret, REDACTED)
