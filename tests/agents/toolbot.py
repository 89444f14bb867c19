"""A test double agent (labelled as such): a Telegram shop bot that calls an LLM and an HTTP tool,
written the way most bots are, without this harness in mind.

Each message goes to the LLM at ``LLM_BASE_URL`` (an OpenAI chat completion with a ``tools``
schema and **no** ``user`` field, no metadata); then the bot calls its ``create_order`` tool at
``TOOLS_URL`` with the item and quantity it read from the text (and the chat id, as an order
service needs it), and replies ``Order <id> is <status>`` from the tool's answer, or
``Sorry, <tool status>`` when the tool failed. On an LLM answer of 429/5xx it retries once,
after the answer's Retry-After (default 1 s), or at once when the text holds ``rush`` (the
regression ``retry_wait`` must catch). ``LLM_MODEL`` names the model (default gpt-4o-mini).
``TOOLBOT_FROM_LLM=1``: the tool gets exactly the arguments of the LLM answer's tool call, and
no chat id (a bot that forwards function calls as they come). ``TOOLBOT_REWRITE=1``: the LLM gets
the user's words in reverse order (a bot that rewrites the request: its calls carry no text of the case).
"""

from __future__ import annotations

import asyncio
import json
import re

import aiohttp
from aiohttp import web

TARGET_ENV = """
[target.env]
TELEGRAM_API_BASE = "{telegram_api}"
TELEGRAM_BOT_TOKEN = "{bot_token}"
TELEGRAM_WEBHOOK_SECRET = "{webhook_secret}"
LLM_BASE_URL = "{llm_base_url}"
TOOLS_URL = "{tools_url}"
"""

TOOLS = [{"type": "function", "function": {
    "name": "create_order", "description": "Order an item",
    "parameters": {"type": "object", "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}}}}}]


def make_app(env: dict) -> web.Application:
    tg_base = f"{env['TELEGRAM_API_BASE']}/bot{env['TELEGRAM_BOT_TOKEN']}"
    model = env.get("LLM_MODEL", "gpt-4o-mini")
    state: dict = {}
    tasks: set = set()

    async def session() -> aiohttp.ClientSession:
        if "s" not in state:
            state["s"] = aiohttp.ClientSession()
        return state["s"]

    async def ask_llm(text: str) -> dict:
        s = await session()
        if env.get("TOOLBOT_REWRITE"):  # the user's words reach the LLM reordered: nothing to match them by
            text = " ".join(reversed(text.split()))
        body = {"model": model, "tools": TOOLS, "messages": [
            {"role": "system", "content": "You are a shop assistant. Use create_order to order."},
            {"role": "user", "content": text}]}
        for attempt in range(2):
            async with s.post(f"{env['LLM_BASE_URL']}/chat/completions", json=body) as r:
                answer = await r.json(content_type=None) if r.status < 400 else {}
                if r.status != 429 and r.status < 500:
                    return answer
                wait = float(r.headers.get("Retry-After") or 1)
            if attempt == 0:
                await asyncio.sleep(0 if "rush" in text else wait)
        return {}

    async def handle(chat_id: int, text: str) -> None:
        answer = await ask_llm(text)
        if env.get("TOOLBOT_FROM_LLM"):
            calls = ((answer.get("choices") or [{}])[0].get("message") or {}).get("tool_calls") or []
            args = json.loads(calls[0]["function"]["arguments"]) if calls else {}
        else:
            m = re.search(r"(\d+)\s+(\w+)", text)
            quantity, item = (int(m.group(1)), m.group(2)) if m else (1, "thing")
            args = {"chat_id": chat_id, "item": item, "quantity": quantity}
        s = await session()
        async with s.post(f"{env['TOOLS_URL']}/create_order", json=args) as r:
            answer = await r.json(content_type=None)
            status = r.status
        reply = (f"Order {answer.get('id', '?')} is {answer.get('status', '?')}" if status < 400
                 else f"Sorry, the order service answered {status}")
        async with s.post(f"{tg_base}/sendMessage", json={"chat_id": chat_id, "text": reply}) as r:
            await r.read()

    async def telegram(request: web.Request) -> web.Response:
        if request.headers.get("X-Telegram-Bot-Api-Secret-Token") != env["TELEGRAM_WEBHOOK_SECRET"]:
            return web.Response(status=401)
        msg = (await request.json()).get("message") or {}
        if "text" in msg:
            task = asyncio.get_running_loop().create_task(handle(msg["chat"]["id"], msg["text"]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return web.Response(status=200)

    async def close(_app) -> None:
        for t in list(tasks):
            t.cancel()
        if "s" in state:
            await state["s"].close()

    app = web.Application()
    app.router.add_post("/telegram", telegram)
    app.on_cleanup.append(close)
    return app
