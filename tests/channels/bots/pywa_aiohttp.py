"""pywa mounted on aiohttp through its documented custom-server hooks
(``webhook_challenge_handler``, ``webhook_update_validator``, ``webhook_update_handler``),
mirroring ``pywa._helpers.register_routes_starlette`` line for line, so signature checking,
parsing, duplicate dropping and handler dispatch are all pywa's. Used by bots/pywa_bot.py
(imported from its own folder) and tests/channels/test_whatsapp_pywa.py."""

from __future__ import annotations

from typing import Callable

from aiohttp import web
from pywa_async import WhatsApp, utils


def webhook_routes(wa: WhatsApp, path: str, on_challenge: Callable[[], None] | None = None) -> list[web.RouteDef]:
    """GET ``path``: the verification handshake (``on_challenge`` is called first); POST ``path``: an update."""

    async def challenge(request: web.Request) -> web.Response:
        if on_challenge is not None:
            on_challenge()
        content, status = await wa.webhook_challenge_handler(vt=request.query.get(utils.HUB_VT),
                                                             ch=request.query.get(utils.HUB_CH))
        return web.Response(text=content or "", status=status, content_type="text/plain")

    async def update(request: web.Request) -> web.Response:
        body = await request.read()
        if error := await wa.webhook_update_validator(update=body, hmac_header=request.headers.get(utils.HUB_SIG)):
            return web.Response(text=error[0], status=error[1])
        await wa.webhook_update_handler(body)
        return web.Response(text="OK")

    return [web.get(path, challenge), web.post(path, update)]
