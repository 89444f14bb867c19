"""A test double agent (labelled as such), flaky on purpose, deterministically.

Telegram only. It answers 'echo: <text>'; but a message starting with 'flip' gets the right
answer only on odd-numbered 'flip' messages (1st, 3rd, ...) and 'oops' on even ones, so a
case that sends one 'flip' message passes, fails, passes across ``--repeat 3``.
"""

from __future__ import annotations

import asyncio
import itertools

import aiohttp
from aiohttp import web


def make_app(env: dict) -> web.Application:
    tg_base = f"{env['TELEGRAM_API_BASE']}/bot{env['TELEGRAM_BOT_TOKEN']}"
    flips = itertools.count(1)
    state: dict = {"tasks": set()}

    async def reply(chat_id: int, text: str) -> None:
        if "s" not in state:
            state["s"] = aiohttp.ClientSession()
        async with state["s"].post(f"{tg_base}/sendMessage", json={"chat_id": chat_id, "text": text}) as r:
            await r.read()

    async def telegram(request: web.Request) -> web.Response:
        if request.headers.get("X-Telegram-Bot-Api-Secret-Token") != env["TELEGRAM_WEBHOOK_SECRET"]:
            return web.Response(status=401)
        msg = (await request.json()).get("message") or {}
        text = msg.get("text")
        if isinstance(text, str):
            answer = f"echo: {text}"
            if text.startswith("flip") and next(flips) % 2 == 0:
                answer = "oops"
            task = asyncio.get_running_loop().create_task(reply(msg["chat"]["id"], answer))
            state["tasks"].add(task)
            task.add_done_callback(state["tasks"].discard)
        return web.Response(status=200)

    async def close(_app) -> None:
        for t in list(state["tasks"]):
            t.cancel()
        if "s" in state:
            await state["s"].close()

    app = web.Application()
    app.router.add_post("/telegram", telegram)
    app.on_cleanup.append(close)
    return app
