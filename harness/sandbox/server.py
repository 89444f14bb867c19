"""Lifecycle of the sandbox's loopback HTTP servers (aiohttp, 127.0.0.1, free port)."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from harness.errors import SandboxError

HOST = "127.0.0.1"


@dataclass
class Listening:
    """A started aiohttp application and where it listens."""

    runner: web.AppRunner
    base_url: str
    port: int

    async def stop(self) -> None:
        await self.runner.cleanup()


async def listen(app: web.Application, name: str, port: int = 0) -> Listening:
    """Start ``app`` on 127.0.0.1 (port 0: a free one) and return where it listens."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise SandboxError(
            f"the {name} server could not listen on {HOST}:{port}: {exc}",
            fix="free the port, or set it to 0 in [sandbox] to pick a free one",
        ) from exc
    sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
    actual = sockets[0].getsockname()[1] if sockets else port
    return Listening(runner=runner, base_url=f"http://{HOST}:{actual}", port=actual)
