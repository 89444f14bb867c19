"""Lifecycle of the sandbox's loopback HTTP servers (aiohttp, 127.0.0.1, free port).

``reserve`` binds a listening socket with the standard library alone (no aiohttp import):
``harness run`` binds the sandbox's sockets right after the config loads, so the target can be
started with their addresses before the harness's own heavy imports are done
(``harness.run.early``); a connection the target makes meanwhile waits in the socket's backlog
until ``listen(..., sock=...)`` serves it."""

from __future__ import annotations

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
