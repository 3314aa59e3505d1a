"""One httpx client per event loop, shared by the judge calls in flight on it.

Connections are kept alive between calls, and the client is closed by the last call out, on
its own loop (an httpx client belongs to the loop it was first used on, like every asyncio
object). A run grades on one loop, so it has one client while its judge calls overlap.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import threading
import weakref
from collections.abc import AsyncIterator

import attrs
import httpx

__all__ = ["shared_client"]


@attrs.define
class _Shared:
    client: httpx.AsyncClient
    users: int = 0


_lock = threading.Lock()
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = (
    weakref.WeakKeyDictionary()
)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client: building one (loading the CA bundle) costs tens of
    milliseconds, and a client is made per event loop."""
    return httpx.create_ssl_context()


@contextlib.asynccontextmanager
async def shared_client() -> AsyncIterator[httpx.AsyncClient]:
    """The running loop's client, for the duration of the block."""
    loop = asyncio.get_running_loop()
    with _lock:
        shared = _clients.get(loop)
        if shared is None:
            # No pool limit of httpx's own (100 by default): --judge-concurrency is the limit.
            unlimited = httpx.Limits(max_connections=None, max_keepalive_connections=None)
            client = httpx.AsyncClient(verify=_tls(), follow_redirects=False, limits=unlimited)
            shared = _clients[loop] = _Shared(client)
        shared.users += 1
    try:
        yield shared.client
    finally:
        with _lock:
            shared.users -= 1
            last = shared.users == 0
            if last and _clients.get(loop) is shared:
                del _clients[loop]
        if last:
            await asyncio.shield(shared.client.aclose())
