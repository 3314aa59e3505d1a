"""HTTP for judge calls: where calls go (`Connection`), retries with backoff, one aiohttp
session per event loop, the API key (read, checked, redacted), and one boundary where
transport and server errors become JudgeErrors with the API key removed.

aiohttp is imported here only, and this module only when a judge call is made (or a prompt
grader created): `import gradekit` never loads it. aiohttp, not httpx: its C parser costs a
fraction of httpx's transport stack per call (bench/RESULTS.md, "The judge's transport").

Every text that came from the server or from the transport passes through `redact` before it
becomes an error's message, and the errors (in `gradekit.core.errors`) each become the
`error` of a result, never a raise out of a grade:
`JudgeHTTPError: the judge at URL answered HTTP 401 (...)`.

A key is sent in an HTTP header, which carries printable ASCII (and spaces) only. A key read
from a file often ends with a newline (`export KEY=$(cat key.txt)` keeps none, a CRLF `.env`
keeps a `\\r`): surrounding whitespace is removed; any other character outside printable ASCII
makes the key unusable, and is reported without showing the key.

Connections are kept alive between calls: one aiohttp session per event loop, shared by the
judge calls in flight on it and closed by the last call out, on its own loop (a session
belongs to the loop it was made on, like every asyncio object).

Imports the core, `shared` (the run's limit and statistics) and aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import json
import math
import os
import random
import ssl
import threading
import time
import urllib.parse
import urllib.request
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final, TypeGuard

import aiohttp
import attrs

from gradekit.core.errors import (
    JudgeConnectionError,
    JudgeError,
    JudgeHTTPError,
    JudgeReplyError,
    JudgeTimeoutError,
)
from gradekit.graders.prompt.shared import JudgeRun

__all__ = [
    "REDACTED",
    "Connection",
    "HttpRequest",
    "RetryPolicy",
    "UnusableKey",
    "api_key",
    "post_json",
    "redact",
    "redact_values",
    "shared_client",
]

RETRIED_STATUSES: Final = frozenset({408, 409, 429}) | frozenset(range(500, 600))
"""429 (rate limited), 5xx (the server's trouble) and the two 4xx that say "try again"."""

BODY_SHOWN: Final = 300
"""Characters of an error body quoted in a message."""


@attrs.frozen
class HttpRequest:
    """One JSON POST to a judge. `headers` hold the API key and are never shown; `secret` is
    the key, removed from every text that comes back; `key_hint` names where the key comes
    from (for the message of a 401)."""

    url: str
    body: Mapping[str, Any]
    headers: Mapping[str, str] = attrs.field(repr=False, factory=dict)
    secret: str | None = attrs.field(repr=False, default=None)
    key_hint: str = "the API key"


@attrs.frozen
class RetryPolicy:
    """How hard to try. Attempt n (from 0) that failed in a retryable way waits
    `base_delay * 2**n` seconds (at most `max_delay`, scaled by a random factor in [0.5, 1])
    or what the server's `Retry-After` asks, then tries again, at most `max_retries` times.
    `request_timeout` bounds one attempt (None: the time left); `timeout` is the grader's
    whole time, for messages (the deadline itself is given to `post_json`)."""

    max_retries: int = 3
    base_delay: float = 1.0
    request_timeout: float | None = None
    connect_timeout: float = 10.0
    timeout: float = 60.0
    max_delay: float = 30.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` when the server did not say."""
        delay = min(self.max_delay, self.base_delay * 2.0**attempt)
        return delay * random.uniform(0.5, 1.0)


@attrs.frozen
class Connection:
    """Where and how calls go: the server's `url` (the endpoint posted to), its `base_url`
    (as the grader resolved it: part of the cache key), the environment variable holding the
    key (the key itself is read at each call and kept nowhere), and the retry policy."""

    url: str
    base_url: str
    key_env: str
    key_required: bool
    policy: RetryPolicy


class _Retry(Exception):
    """An attempt failed in a way worth trying again: `error` if it is the last, `wait` (if
    set) is what the server asked for."""

    def __init__(self, error: JudgeError, wait: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.wait = wait


async def post_json(
    request: HttpRequest, *, deadline: float, policy: RetryPolicy, run: JudgeRun
) -> Any:
    """POST `request.body` as JSON and return the decoded reply, retrying what is worth it.

    `deadline` is a `time.monotonic()` instant past which no attempt starts or continues;
    each attempt holds one of the `run`'s slots, and each retry is counted in its statistics.
    Raises JudgeError subclasses only, whose messages hold no API key.
    """
    async with shared_client() as (client, proxies):
        proxy = proxies[request.url]
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _no_reply(request, policy, attempt)
            try:
                return await _attempt(client, proxy, request, policy, remaining, run)
            except _Retry as retry:
                if attempt >= policy.max_retries:
                    raise _exhausted(retry.error, attempt + 1) from None
                wait = policy.backoff(attempt) if retry.wait is None else retry.wait
                if time.monotonic() + wait >= deadline:
                    raise _too_late(retry.error, policy) from None
                attempt += 1
                run.count(retries=1)
                await asyncio.sleep(wait)


async def _attempt(  # noqa: PLR0917 (one call site, each argument named there)
    client: aiohttp.ClientSession,
    proxy: str | None,
    request: HttpRequest,
    policy: RetryPolicy,
    remaining: float,
    run: JudgeRun,
) -> Any:
    waited = time.monotonic()
    if not await run.limit.acquire(remaining):
        raise JudgeTimeoutError(
            f"no free judge slot within the grader's timeout of {policy.timeout:g}s: more "
            "judge calls are waiting than --judge-concurrency lets through; raise timeout or "
            "--judge-concurrency"
        )
    remaining -= time.monotonic() - waited  # the slot's wait counts against the deadline
    if policy.request_timeout is not None and policy.request_timeout < remaining:
        seconds = policy.request_timeout
        within = f"within {seconds:g}s (request_timeout)"
    else:
        seconds = max(remaining, 0.001)
        within = f"within the grader's timeout of {policy.timeout:g}s"
    timeout = aiohttp.ClientTimeout(total=seconds, connect=min(policy.connect_timeout, seconds))
    try:
        # The total bounds the whole attempt, the body's reading included: a server sending
        # a byte now and then cannot hold it for ever.
        async with client.post(
            request.url,
            data=json.dumps(dict(request.body)).encode(),
            headers={"content-type": "application/json", **request.headers},
            timeout=timeout,
            allow_redirects=False,
            proxy=proxy,
        ) as response:
            status, body = response.status, await response.read()
            retry_after = response.headers.get("retry-after")
    except asyncio.TimeoutError as error:
        text = f"no reply from the judge at {request.url} {within}"
        raise _Retry(JudgeTimeoutError(text)) from error
    except aiohttp.InvalidURL as error:  # a URL aiohttp cannot send to (or no http/https)
        raise JudgeConnectionError(
            f"cannot send the request to the judge at {request.url} ({_cause(error, request)}); "
            "check base_url"
        ) from error
    except (aiohttp.ClientResponseError, aiohttp.ClientPayloadError) as error:
        # A reply that cannot be read: a malformed status line, headers or body.
        raise JudgeReplyError(
            f"the judge at {request.url} sent a reply that cannot be read "
            f"({_cause(error, request)}); check base_url and the server"
        ) from error
    except (aiohttp.ClientError, OSError) as error:  # refused, reset, closed mid-reply
        text = f"cannot reach the judge at {request.url} ({_cause(error, request)})"
        raise _Retry(JudgeConnectionError(text)) from error
    finally:
        run.limit.release()
    return _decode(status, body.decode("utf-8", "replace"), retry_after, request)


def _cause(error: Exception, request: HttpRequest) -> str:
    """`ErrorClass: message` of a transport error on one line, without the API key."""
    return redact(" ".join(f"{type(error).__name__}: {error}".split()), request.secret)


def _decode(status: int, text: str, retry_after: str | None, request: HttpRequest) -> Any:
    if status == 200:
        # Decoded first, then each string redacted: the key's text may also be JSON's own.
        try:
            return redact_values(json.loads(text), request.secret)
        except ValueError:
            body = redact(text, request.secret)
            raise JudgeReplyError(
                f"the judge at {request.url} answered HTTP 200 with a body that is not JSON: "
                f"{_excerpt(body)}; check that base_url points at the API (with its /v1 for "
                "an OpenAI-compatible server)"
            ) from None
    shown = _error_text(text, request.secret)
    message = f"the judge at {request.url} answered HTTP {status}: {shown}"
    error = JudgeHTTPError(message, status)
    if status in RETRIED_STATUSES:
        raise _Retry(error, _retry_after(retry_after))
    raise JudgeHTTPError(f"{message}; {_hint(status, request)}", status)


def _hint(status: int, request: HttpRequest) -> str:
    if status in (401, 403):
        return f"check {request.key_hint}"
    if status == 404:
        return "check base_url and model"
    return "check the grader's options (model, max_tokens, temperature)"


def _exhausted(error: JudgeError, attempts: int) -> JudgeError:
    suffix = f" (after {attempts} attempts)" if attempts > 1 else ""
    if isinstance(error, JudgeHTTPError) and error.status == 429:
        hint = "the server is rate limiting: lower --judge-concurrency or raise max_retries"
    elif isinstance(error, JudgeHTTPError):
        hint = "the server is failing: try again later or raise max_retries"
    elif isinstance(error, JudgeTimeoutError):
        hint = "raise request_timeout or timeout, or check the server"
    else:
        hint = "check base_url and that the server is running"
    text = f"{error.message}{suffix}; {hint}"
    if isinstance(error, JudgeHTTPError):
        return JudgeHTTPError(text, error.status)
    return type(error)(text)


def _too_late(error: JudgeError, policy: RetryPolicy) -> JudgeTimeoutError:
    """The error when the next attempt would start past the deadline."""
    if isinstance(error, JudgeTimeoutError):
        return JudgeTimeoutError(f"{error.message}; raise timeout, or check the server")
    if isinstance(error, JudgeHTTPError) and error.status == 429:
        hint = "raise timeout, or lower --judge-concurrency: the server is rate limiting"
    else:
        hint = "raise timeout, or check the server"
    return JudgeTimeoutError(
        f"{error.message}; no time is left for another attempt within the grader's timeout "
        f"of {policy.timeout:g}s; {hint}"
    )


def _no_reply(request: HttpRequest, policy: RetryPolicy, attempts: int) -> JudgeError:
    return JudgeTimeoutError(
        f"no reply from the judge at {request.url} within the grader's timeout of "
        f"{policy.timeout:g}s ({attempts} attempts); raise timeout, or check the server"
    )


def _retry_after(value: str | None) -> float | None:
    """Seconds a `Retry-After` header asks for (a number or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return None if math.isnan(seconds) else max(0.0, seconds)


def _error_text(body: str, secret: str | None) -> str:
    """The server's own error message when the body is the usual JSON error, else the body;
    without the key either way (redacted once decoded: JSON may escape it, `\\/` for `/`)."""
    text = body
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        text = error["message"]
    elif isinstance(error, str):
        text = error
    return _excerpt(redact(text, secret))


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return "(empty body)"
    return repr(text if len(text) <= BODY_SHOWN else text[: BODY_SHOWN - 1] + "…")


# -- the API key ----------------------------------------------------------------------------

REDACTED: Final = "[redacted]"

SHORTEST_HIDDEN: Final = 8
"""Keys shorter than this are placeholders (`none`, `ollama`, `9`) that a local server
ignores, not secrets: hiding them would rewrite every `none` in a reply."""


class UnusableKey(ValueError):
    """The key in the variable holds a character an HTTP header cannot carry."""


def api_key(variable: str) -> str | None:
    """The key in `$variable` without surrounding whitespace; None when unset or blank.

    Raises UnusableKey, naming the variable and the character (never the key), when the key
    holds a character an HTTP header cannot carry.
    """
    key = os.environ.get(variable, "").strip()
    if not key:
        return None
    for position, character in enumerate(key, 1):
        if not (" " <= character <= "~" or character == "\t"):  # what a header value takes
            raise UnusableKey(
                f"the API key in ${variable} holds {_described(character)} at character "
                f"{position}, which an HTTP header cannot carry; set ${variable} to the key alone"
            )
    return key


def _described(character: str) -> str:
    if character.isascii():
        return f"a control character (U+{ord(character):04X})"
    return f"a non-ASCII character (U+{ord(character):04X})"


def _hidden(secret: str | None) -> TypeGuard[str]:
    """Whether texts must not show `secret`: a key, not a placeholder (SHORTEST_HIDDEN)."""
    return secret is not None and len(secret) >= SHORTEST_HIDDEN


def redact(text: str, secret: str | None) -> str:
    """`text` with every form of `secret` (as is, and escaped as Python or JSON shows it)
    replaced by `[redacted]`. Placeholder keys (shorter than SHORTEST_HIDDEN) are left."""
    if not _hidden(secret):
        return text
    for form in {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]}:
        text = text.replace(form, REDACTED)
    return text


def redact_values(data: object, secret: str | None) -> object:
    """Decoded JSON `data` with `redact` applied to each of its strings (keys included)."""
    if not _hidden(secret):
        return data
    if isinstance(data, str):
        return redact(data, secret)
    if isinstance(data, list):
        return [redact_values(item, secret) for item in data]
    if isinstance(data, dict):
        return {redact(str(k), secret): redact_values(v, secret) for k, v in data.items()}
    return data


# -- one session per event loop ----------------------------------------------------------------


@attrs.define
class _Shared:
    client: aiohttp.ClientSession
    proxies: _Proxies
    users: int = 0


class _Proxies(dict[str, "str | None"]):
    """The proxy for each judge URL, from the environment (`HTTPS_PROXY`, `HTTP_PROXY`,
    `NO_PROXY`), read once per URL and session. aiohttp's own `trust_env` reads them (and
    parses `~/.netrc`) in a worker thread at every request: a thread hand-off per call."""

    def __missing__(self, url: str) -> str | None:
        parts = urllib.parse.urlsplit(url)
        proxy = urllib.request.getproxies().get(parts.scheme)
        if proxy is not None and urllib.request.proxy_bypass(parts.hostname or ""):
            proxy = None
        self[url] = proxy
        return proxy


_lock = threading.Lock()
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = (
    weakref.WeakKeyDictionary()
)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every session: building one (loading the CA bundle) costs tens of
    milliseconds, and a session is made per event loop."""
    return ssl.create_default_context()


@contextlib.asynccontextmanager
async def shared_client() -> AsyncIterator[tuple[aiohttp.ClientSession, _Proxies]]:
    """The running loop's session and its proxies, for the duration of the block."""
    loop = asyncio.get_running_loop()
    with _lock:
        shared = _clients.get(loop)
        if shared is None:
            # No pool limit of aiohttp's own (100 by default): --judge-concurrency is the
            # limit. Proxies from the environment are honoured (`_Proxies`).
            connector = aiohttp.TCPConnector(limit=0, ssl=_tls())
            client = aiohttp.ClientSession(connector=connector, trust_env=False)
            shared = _clients[loop] = _Shared(client, _Proxies())
        shared.users += 1
    try:
        yield shared.client, shared.proxies
    finally:
        with _lock:
            shared.users -= 1
            last = shared.users == 0
            if last and _clients.get(loop) is shared:
                del _clients[loop]
        if last:
            await asyncio.shield(shared.client.close())
