"""The aiohttp application: routes, startup (Bot API getMe + setWebhook) and shutdown."""

from __future__ import annotations

import logging

import aiohttp
from aiohttp import web

from . import __version__, noise, offline_model, telegram, whatsapp
from . import keys
from .config import Config
from .llm import LLMClient
from .pipeline import Pipeline
from .sessions import Store

log = logging.getLogger("docbot")


async def healthz(request: web.Request) -> web.Response:
    cfg: Config = request.app[keys.CFG]
    return web.json_response({"ok": True, "name": "docbot", "version": __version__,
                              "regressions": sorted(cfg.regressions)})


async def state(request: web.Request) -> web.Response:
    s = request.app[keys.STORE].get(request.match_info["chat_id"])
    return web.json_response(s.state())


async def offline_completions(request: web.Request) -> web.Response:
    try:
        body = await request.json()
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise ValueError
    except ValueError:
        return web.json_response({"error": {"message": "invalid request", "type":
                                            "invalid_request_error"}}, status=400)
    answer = offline_model.complete(body)
    if noise.enabled():  # DOCBOT_NOISE: paraphrase and jitter like a real provider
        await noise.delay()
        message = answer["choices"][0]["message"]
        system = "\n".join(str(m.get("content") or "") for m in body["messages"] if m.get("role") == "system")
        try:  # a post must stay within its platform's limit, noise or not
            limit = int(offline_model._marker(system, "MAX_CHARS") or 0) or None
        except ValueError:
            limit = None
        message["content"] = noise.paraphrase(message["content"], limit=limit)
    return web.json_response(answer)


async def offline_models(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": "offline", "object": "model"}]})


async def _startup(app: web.Application) -> None:
    cfg: Config = app[keys.CFG]
    app[keys.STORE] = store = Store(cfg.db_path)
    app[keys.HTTP] = http = aiohttp.ClientSession()           # channel APIs + LLM
    app[keys.FETCH_HTTP] = fetch_http = aiohttp.ClientSession()  # documents (allowlisted)
    app[keys.TELEGRAM] = tg = telegram.TelegramClient(cfg, http)
    wa = whatsapp.WhatsAppClient(cfg, http)
    app[keys.PIPELINE] = pipeline = Pipeline(cfg, store, fetch_http, LLMClient(cfg, http),
                                          {"telegram": tg, "whatsapp": wa}, wa)
    pipeline.spawn(tg.setup())
    log.info("docbot %s listening on %s:%s (regressions: %s)", __version__, cfg.host, cfg.port,
             ",".join(sorted(cfg.regressions)) or "none")


async def _cleanup(app: web.Application) -> None:
    await app[keys.PIPELINE].close()
    await app[keys.HTTP].close()
    await app[keys.FETCH_HTTP].close()
    app[keys.STORE].close()


def create_app(cfg: Config) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[keys.CFG] = cfg
    app.router.add_post("/telegram", telegram.webhook)
    app.router.add_get("/whatsapp", whatsapp.verify)
    app.router.add_post("/whatsapp", whatsapp.webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/state/{chat_id}", state)
    app.router.add_post("/offline/v1/chat/completions", offline_completions)
    app.router.add_get("/offline/v1/models", offline_models)
    app.on_startup.append(_startup)
    app.on_cleanup.append(_cleanup)
    return app
