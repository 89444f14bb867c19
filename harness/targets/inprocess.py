"""A Python target served inside the harness's own process, still over real HTTP.

``[target].inprocess = "module:attr"`` names either a factory ``attr(env) -> aiohttp
web.Application`` (a webhook app; served on loopback so the channel protocols stay real)
or an async callable ``attr(channel, update) -> dict | None`` (wrapped in a tiny app:
its return value becomes the webhook answer body, e.g. a Bot API method call).
"""

from __future__ import annotations

import importlib
import inspect
import logging
from typing import Any

from aiohttp import web

from harness.errors import ConfigError, TargetError
from harness.sandbox.server import Listening, listen
from harness.targets.base import Endpoints
from harness.targets.http import fill


log = logging.getLogger("harness.targets.inprocess")


def _failed(spec: str, exc: BaseException) -> web.Response:
    """What the webhook answers when the agent's code raised or called sys.exit: a 500, as its
    server would in production, and one log line (never the harness's exit, never a traceback)."""
    what = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else f"raised {type(exc).__name__}: {exc}"
    log.warning("in-process target %s %s while handling a webhook", spec, str(what)[:300])
    return web.Response(status=500, text=f"in-process target {what}"[:300])


@web.middleware
async def _contained(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the agent's code: a 500, not the harness's end
        return _failed(request.app.get(_SPEC, "?"), exc)


_SPEC = web.AppKey("harness_inprocess_spec", str)


def _wrap_callable(fn: Any, spec: str = "?") -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        channel = request.match_info["channel"]
        if request.method == "GET":  # WhatsApp verification handshake: echo the challenge
            return web.Response(text=request.query.get("hub.challenge", ""))
        answer = await fn(channel, await request.json())
        return web.json_response(answer) if answer else web.Response(status=200)

    app = web.Application()
    app.router.add_route("*", "/{channel}", handle)
    return app


SHAPE = 'inprocess names a factory "module:make_app" (make_app(env) -> aiohttp.web.Application) or an async handler'


def load_object(spec: str) -> Any:
    """The factory or handler ``spec`` names. What can be told without calling it (a module that
    does not import, or raises or calls sys.exit as it does; a name that is no factory: a module,
    a class, a builtin, a constant) is a ConfigError, the same for ``harness check`` and ``run``."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"[target] inprocess {spec!r} must be 'module:attr'", fix='inprocess = "mybot.app:make_app"')
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"[target] inprocess {spec!r} cannot be loaded: {exc}",
                          fix="check the module is importable (on PYTHONPATH, or run from its folder)") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the agent's module: never exit 0 or 70
        what = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else f"raised {type(exc).__name__}: {exc}"
        raise ConfigError(f"[target] inprocess {spec!r}: importing {module_name!r} {what}",
                          fix=f"python -c 'import {module_name}' shows why") from None
    try:
        obj = getattr(module, attr)
    except AttributeError as exc:
        raise ConfigError(f"[target] inprocess {spec!r} cannot be loaded: {exc}", fix=SHAPE) from None
    if not callable(obj) or inspect.isbuiltin(obj) or inspect.isclass(obj):
        raise ConfigError(f"[target] inprocess {spec!r} is a {type(obj).__name__}, not a factory or handler", fix=SHAPE)
    return obj


class InProcessTarget:
    def __init__(self, spec: str, env: dict[str, str] | None = None, state_path: str = ""):
        self.spec = spec
        self.env = env or {}
        self.state_path = state_path
        self._server: Listening | None = None

    async def start(self, placeholders: dict[str, str]) -> Endpoints:
        obj = load_object(self.spec)
        env = {k: fill(v, placeholders) for k, v in self.env.items()}
        shape = SHAPE
        if inspect.iscoroutinefunction(obj):
            app = _wrap_callable(obj, self.spec)
        else:
            try:
                app = obj(env)
                if inspect.isawaitable(app):
                    app = await app
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's factory: a start-up failure
                what = (f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit)
                        else f"raised {type(exc).__name__}: {exc}")
                raise TargetError(f"inprocess target {self.spec}(env) {what}", fix=shape) from None
            if not isinstance(app, web.Application):
                raise TargetError(f"{self.spec} returned {type(app).__name__}, not an aiohttp Application", fix=shape)
        if not app.frozen:  # a handler that raises or calls sys.exit answers 500; the run goes on
            app[_SPEC] = self.spec
            app.middlewares.insert(0, _contained)
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
