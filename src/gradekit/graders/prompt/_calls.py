"""One judge call: from the cache if it holds the reply, else over HTTP, with structured
output where the server takes it and plain text where it refuses."""

from __future__ import annotations

import threading

import attrs

from gradekit.graders.prompt import shared as _budget
from gradekit.graders.prompt._cache import ReplyCache, cache_key
from gradekit.graders.prompt.client import HttpRequest, RetryPolicy, post_json
from gradekit.graders.prompt._errors import JudgeError, JudgeHTTPError
from gradekit.graders.prompt._key import UnusableKey, api_key
from gradekit.graders.prompt.providers import (
    JudgeRequest,
    Reply,
    headers,
    read_reply,
    wire_body,
)

__all__ = ["Asked", "Connection", "ask"]

REFUSAL_STATUSES = frozenset({400, 422})
"""What a server answers to a `response_format` it does not take (vLLM, older Ollama...)."""

# (url, model) pairs whose server refused structured output: later calls skip straight to text.
_plain_only: set[tuple[str, str]] = set()
_plain_lock = threading.Lock()


@attrs.frozen
class Connection:
    """Where and how calls go: the server's `url`, the environment variable holding the key
    (the key itself is read at each call and kept nowhere), and the retry policy."""

    url: str
    key_env: str
    key_required: bool
    policy: RetryPolicy


@attrs.frozen
class Asked:
    """A reply, whether it came from the cache, and its cache key (to store it once it gave
    a judgement)."""

    reply: Reply
    cached: bool
    key: str


async def ask(
    request: JudgeRequest, connection: Connection, cache: ReplyCache | None, deadline: float
) -> Asked:
    """The reply to `request`. Raises JudgeError (counted as a failed call)."""
    key = cache_key(request.key_material())
    if cache is not None:
        stored = cache.get(key)
        if stored is not None:
            _budget.count(cached=1)
            return Asked(stored, True, key)
    _budget.count(calls=1)
    try:
        reply = await _send(request, connection, deadline)
    except JudgeError:
        _budget.count(errors=1)
        raise
    _budget.count(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens)
    return Asked(reply, False, key)


async def _send(request: JudgeRequest, connection: Connection, deadline: float) -> Reply:
    try:
        secret = api_key(connection.key_env)
    except UnusableKey as error:
        raise JudgeError(str(error)) from None
    if secret is None and connection.key_required:
        raise JudgeError(
            f"the environment variable {connection.key_env} is not set (it was when the suite "
            "was loaded); set it to the API key"
        )
    hint = f"the API key in ${connection.key_env}"
    send_headers = headers(request.provider, secret)
    memo = (connection.url, request.model)
    structured = request.schema is not None and memo not in _plain_only

    def http(structured: bool) -> HttpRequest:
        body = wire_body(request, structured=structured)
        return HttpRequest(connection.url, body, send_headers, secret, hint)

    try:
        data = await post_json(http(structured), deadline=deadline, policy=connection.policy)
    except JudgeHTTPError as error:
        if not (structured and request.provider == "openai" and error.status in REFUSAL_STATUSES):
            raise
        data = await post_json(http(False), deadline=deadline, policy=connection.policy)
        with _plain_lock:
            _plain_only.add(memo)
    return read_reply(request.provider, data, connection.url)
