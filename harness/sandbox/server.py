"""Lifecycle of the sandbox's loopback HTTP servers (aiohttp, 127.0.0.1, free port).

``reserve`` binds a listening socket with the standard library alone (no aiohttp import):
``harness run`` binds the sandbox's sockets right after the config loads, so the target can be
started with their addresses before the harness's own heavy imports are done
(``harness.run.early``); a connection the target makes meanwhile waits in the socket's backlog
until ``listen(..., sock=...)`` serves it."""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.errors import SandboxError

if TYPE_CHECKING:
    from aiohttp import web

HOST = "127.0.0.1"
BACKLOG = 128
#: Seconds a stopping server waits for requests still in flight (aiohttp's default is 60): a bot
#: that holds a half-sent request open must not hold up the end of the run for a minute per server.
SHUTDOWN_S = 3.0


@dataclass
class Listening:
    """A started aiohttp application and where it listens."""

    runner: "web.AppRunner"
    base_url: str
    port: int

    async def stop(self) -> None:
        await self.runner.cleanup()


class _BrokenBodyLogFilter(logging.Filter):
    """aiohttp reads on after a handler answered, to drain the request body (its "lingering"),
    and logs "Unhandled exception" with a traceback when the body is broken (a deflate or gzip
    body that does not decompress). That is the client's error, answered 400 already: kept out
    of the logs (and so out of the console)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from aiohttp.http_exceptions import HttpProcessingError
        from aiohttp.web_protocol import RequestPayloadError

        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, (RequestPayloadError, HttpProcessingError))


logging.getLogger("aiohttp.server").addFilter(_BrokenBodyLogFilter())


def _middleware():
    """Every sandbox server's guard: a request body that cannot be read (bad compression, a
    broken chunked encoding) is a 400 where a handler did not answer it itself, never a 500
    with a traceback; and the connection of such a request is closed after the answer, so the
    client opens a new one instead of failing its next call on this one."""
    from aiohttp import web
    from aiohttp.web_protocol import RequestPayloadError

    @web.middleware
    async def guard(request, handler):
        try:
            resp = await handler(request)
        except RequestPayloadError as exc:
            resp = web.json_response({"error": {"message": f"the request body could not be read: {exc}",
                                                "type": "invalid_request_error", "code": 400}}, status=400)
        if request.content.exception() is not None:
            resp.force_close()
        return resp

    return guard


def _cannot_listen(name: str, port: int, exc: OSError) -> SandboxError:
    return SandboxError(f"the {name} server could not listen on {HOST}:{port}: {exc}",
                        fix="free the port, or set it to 0 in [sandbox] to pick a free one")


def reserve(name: str, port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: a free one) for the ``name`` server, served later
    by ``listen(app, name, sock=...)``; the caller closes it if it is never handed over."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise _cannot_listen(name, port, exc) from exc
    return sock


def base_url(sock: socket.socket) -> str:
    return f"http://{HOST}:{sock.getsockname()[1]}"


async def listen(app: "web.Application", name: str, port: int = 0, sock: socket.socket | None = None) -> Listening:
    """Start ``app`` on 127.0.0.1 (port 0: a free one; ``sock``: a socket ``reserve`` bound,
    which the server owns from here) and return where it listens."""
    from aiohttp import web

    if not app.frozen:  # (an agent's app served a second time is frozen: it has the guard already)
        app.middlewares.append(_middleware())
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_S)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port) if sock is None else web.SockSite(runner, sock)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        if sock is not None:
            sock.close()
        raise _cannot_listen(name, port, exc) from exc
    sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
    actual = sockets[0].getsockname()[1] if sockets else port
    return Listening(runner=runner, base_url=f"http://{HOST}:{actual}", port=actual)
