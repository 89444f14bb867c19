"""A Python target served inside the harness's own process, still over real HTTP.

``[target].inprocess = "module:attr"`` names either a factory ``attr(env) -> aiohttp
web.Application`` (a webhook app; served on loopback so the channel protocols stay real)
or an async callable ``attr(channel, update) -> dict | None`` (wrapped in a tiny app:
its return value becomes the webhook answer body, e.g. a Bot API method call).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from aiohttp import web

from harness.errors import TargetError
from harness.sandbox.server import Listening, listen
from harness.targets.base import Endpoints
from harness.targets.http import fill


def _wrap_callable(fn: Any) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        channel = request.match_info["channel"]
        if request.method == "GET":  # WhatsApp verification handshake: echo the challenge
            return web.Response(text=request.query.get("hub.challenge", ""))
        answer = await fn(channel, await request.json())
        return web.json_response(answer) if answer else web.Response(status=200)

    app = web.Application()
    app.router.add_route("*", "/{channel}", handle)
    return app


def load_object(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise TargetError(f"inprocess target {spec!r} must be 'module:attr'", fix='inprocess = "mybot.app:make_app"')
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise TargetError(f"cannot load inprocess target {spec!r}: {exc}", fix="check the module is importable") from exc


class InProcessTarget:
    def __init__(self, spec: str, env: dict[str, str] | None = None, state_path: str = ""):
        self.spec = spec
        self.env = env or {}
        self.state_path = state_path
        self._server: Listening | None = None

    async def start(self, placeholders: dict[str, str]) -> Endpoints:
        obj = load_object(self.spec)
        env = {k: fill(v, placeholders) for k, v in self.env.items()}
        shape = 'inprocess names a factory "module:make_app" (make_app(env) -> aiohttp.web.Application) or an async handler'
        if not callable(obj) or inspect.isbuiltin(obj) or inspect.isclass(obj):
            raise TargetError(f"inprocess target {self.spec!r} is a {type(obj).__name__}, not a factory or handler",
                              fix=shape)
        if inspect.iscoroutinefunction(obj):
            app = _wrap_callable(obj)
        else:
            try:
                app = obj(env)
                if inspect.isawaitable(app):
                    app = await app
            except Exception as exc:  # noqa: BLE001 - the user's factory: its failure is a start-up failure
                raise TargetError(f"inprocess target {self.spec}(env) raised {type(exc).__name__}: {exc}",
                                  fix=shape) from None
            if not isinstance(app, web.Application):
                raise TargetError(f"{self.spec} returned {type(app).__name__}, not an aiohttp Application", fix=shape)
        self._server = await listen(app, f"in-process target {self.spec}")
        base = self._server.base_url
        return Endpoints(telegram_webhook=f"{base}/telegram", whatsapp_webhook=f"{base}/whatsapp",
                         state_url=f"{base}{self.state_path}" if self.state_path else "")

    async def stop(self) -> None:
        if self._server:
            await self._server.stop()
            self._server = None

    def alive(self) -> bool:
        return True

    def log_tail(self, lines: int = 30) -> str:
        return ""
