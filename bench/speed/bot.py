"""The benchmark's bot: answers every message after 50 ms, on Telegram and over plain HTTP.

Two faces of one answer function, so the harness and promptfoo see the same replies:

- ``--telegram``: a Telegram bot behind a webhook (``POST /telegram``, secret header
  checked), replying through the Bot API at ``TELEGRAM_API_BASE`` (the harness's emulator)
  50 ms after the update came in; ``GET /healthz`` for the harness's ready check.
- ``--http``: its HTTP twin for promptfoo's ``http`` provider: ``POST /chat {"prompt"}``
  answers ``{"output"}`` after the same 50 ms.

Only aiohttp; no harness import (the bot is the system under test, not part of the harness).
"""

from __future__ import annotations

import argparse
import asyncio
import os

from aiohttp import ClientSession, ClientTimeout, web

DELAY_S = float(os.environ.get("BENCH_BOT_DELAY_S", "0.05"))


def answer(text: str) -> str:
    """A deterministic chat answer: what was asked, echoed in a sentence, and its length."""
    words = text.split()
    if not words:
        return "Please send me a question."
    return f"You asked about {' '.join(words[-3:])}. That is {len(words)} words; here is my answer: {text}"


def telegram_app() -> web.Application:
    base = os.environ["TELEGRAM_API_BASE"].rstrip("/")
    token = os.environ["TELEGRAM_BOT_TOKEN"]
    secret = os.environ.get("TELEGRAM_WEBHOOK_SECRET", "")
    tasks: set[asyncio.Task] = set()
    state: dict[str, ClientSession] = {}

    async def reply(chat_id: int, text: str) -> None:
        await asyncio.sleep(DELAY_S)
        async with state["session"].post(f"{base}/bot{token}/sendMessage",
                                         json={"chat_id": chat_id, "text": answer(text)}) as resp:
            await resp.read()

    async def webhook(request: web.Request) -> web.Response:
        if secret and request.headers.get("X-Telegram-Bot-Api-Secret-Token") != secret:
            return web.Response(status=401)
        update = await request.json()
        msg = update.get("message") or update.get("edited_message")
        if msg and "chat" in msg:
            task = asyncio.create_task(reply(msg["chat"]["id"], msg.get("text") or ""))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return web.json_response({})

    async def healthz(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def on_startup(_app: web.Application) -> None:
        state["session"] = ClientSession(timeout=ClientTimeout(total=10))

    async def on_cleanup(_app: web.Application) -> None:
        await state["session"].close()

    app = web.Application()
    app.router.add_post("/telegram", webhook)
    app.router.add_get("/healthz", healthz)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


def http_app() -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(DELAY_S)
        return web.json_response({"output": answer(str(body.get("prompt", "")))})

    async def healthz(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/chat", chat)
    app.router.add_get("/healthz", healthz)
    return app


def main() -> None:
    ap = argparse.ArgumentParser()
    face = ap.add_mutually_exclusive_group(required=True)
    face.add_argument("--telegram", action="store_true")
    face.add_argument("--http", action="store_true")
    ap.add_argument("--port", type=int, default=int(os.environ.get("PORT", "0") or 0))
    args = ap.parse_args()
    app = telegram_app() if args.telegram else http_app()
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
