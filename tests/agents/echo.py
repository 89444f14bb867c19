"""A test double agent (labelled as such): replies 'echo: <text>' on either channel.

It speaks the real protocols through the sandbox's emulators, so runner tests exercise
the whole path: driver -> webhook -> agent -> Bot API / Graph API emulator -> evidence.
Behaviour switches (env ECHO_MODE): 'double' replies twice, 'silent' never replies,
'slow' waits 1.5 s before replying, 'crash' answers 500 and never replies, 'cross' waits
0.3 s and then replies to whichever Telegram chat wrote last (replies crossing chats),
'keyword' answers "OK, summarizing." only to a message holding the exact word "summarize"
(case, accents and typos matter) and "Sorry, I did not understand that." otherwise,
'trusting' checks neither the Telegram secret token nor the WhatsApp signature (a bot anyone
can post to, for the forged-delivery cases).
ECHO_SLOW_WORD (any mode): a Telegram message holding that word is answered 1.5 s late.
ECHO_LATE_S (any mode): every Telegram reply is sent once more, that many seconds later;
with ECHO_ACK set, "working on it" comes first and the echo only that many seconds later.
ECHO_STALL_S (in-process only, where the agent shares the harness's loop): a Telegram message
holding the word "stall" blocks that loop for that many seconds 50 ms after the webhook answered,
then is echoed: a harness starved of CPU while the agent's reply waits unread in its sockets.
ECHO_TOOL_S (any mode): a Telegram message holding the word "tool" gets no reply; that many
seconds later the agent posts it to its ``lookup`` tool at TOOLS_URL (a tool called late, after
a turn's quiet window would have ended).
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
from aiohttp import web


#: The [target.env] table a harness.toml needs to drive this agent (placeholders filled per run).
TARGET_ENV = """
[target.env]
TELEGRAM_API_BASE = "{telegram_api}"
TELEGRAM_BOT_TOKEN = "{bot_token}"
TELEGRAM_WEBHOOK_SECRET = "{webhook_secret}"
WHATSAPP_API_BASE = "{whatsapp_api}"
WHATSAPP_PHONE_NUMBER_ID = "{phone_number_id}"
WHATSAPP_TOKEN = "{whatsapp_token}"
WHATSAPP_APP_SECRET = "{app_secret}"
WHATSAPP_VERIFY_TOKEN = "{verify_token}"
"""


def make_app(env: dict) -> web.Application:
    mode = env.get("ECHO_MODE", "")
    tg_base = f"{env['TELEGRAM_API_BASE']}/bot{env['TELEGRAM_BOT_TOKEN']}"
    wa_url = f"{env['WHATSAPP_API_BASE']}/v21.0/{env['WHATSAPP_PHONE_NUMBER_ID']}/messages"
    wa_headers = {"Authorization": f"Bearer {env['WHATSAPP_TOKEN']}"}
    sessions: dict = {}
    tasks: set = set()

    async def session() -> aiohttp.ClientSession:
        if "s" not in sessions:
            sessions["s"] = aiohttp.ClientSession()
        return sessions["s"]

    last_chat: dict = {}

    slow_word = env.get("ECHO_SLOW_WORD", "")
    late_s = float(env.get("ECHO_LATE_S") or 0)
    ack = bool(env.get("ECHO_ACK"))
    stall_s = float(env.get("ECHO_STALL_S") or 0)
    tool_s = float(env.get("ECHO_TOOL_S") or 0)

    async def reply_telegram(chat_id: int, text: str) -> None:
        if tool_s and "tool" in text.split():
            await asyncio.sleep(tool_s)
            s = await session()
            async with s.post(f"{env['TOOLS_URL']}/lookup", json={"q": text}) as r:
                await r.read()
            return
        if stall_s and "stall" in text.split():
            await asyncio.sleep(0.05)
            import time

            time.sleep(stall_s)  # the loop is held: the harness hears nothing meanwhile
        if mode == "slow" or (slow_word and slow_word in text):
            await asyncio.sleep(1.5)
        if mode == "cross":
            await asyncio.sleep(0.3)
            chat_id = last_chat.get("id", chat_id)
        s = await session()
        for _ in range(2 if mode == "double" else 1):
            first = "working on it" if ack else text
            async with s.post(f"{tg_base}/sendMessage", json={"chat_id": chat_id, "text": first}) as r:
                await r.read()
        if late_s:
            await asyncio.sleep(late_s)
            async with s.post(f"{tg_base}/sendMessage", json={"chat_id": chat_id, "text": text}) as r:
                await r.read()

    async def reply_whatsapp(to: str, text: str) -> None:
        s = await session()
        body = {"messaging_product": "whatsapp", "to": to, "type": "text", "text": {"body": text}}
        for _ in range(2 if mode == "double" else 1):
            async with s.post(wa_url, json=body, headers=wa_headers) as r:
                await r.read()

    def spawn(coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def telegram(request: web.Request) -> web.Response:
        if mode != "trusting" and request.headers.get("X-Telegram-Bot-Api-Secret-Token") != env[
                "TELEGRAM_WEBHOOK_SECRET"]:
            return web.Response(status=401)
        if mode == "crash":
            return web.Response(status=500)
        update = await request.json()
        msg = update.get("message") or update.get("edited_message") or {}
        if "chat" in msg:
            last_chat["id"] = msg["chat"]["id"]
        if mode == "keyword" and "text" in msg:
            understood = "summarize" in msg["text"].split()
            spawn(reply_telegram(msg["chat"]["id"], "OK, summarizing." if understood
                                 else "Sorry, I did not understand that."))
        elif mode != "silent" and "text" in msg:
            spawn(reply_telegram(msg["chat"]["id"], f"echo: {msg['text']}"))
        return web.Response(status=200)

    async def whatsapp(request: web.Request) -> web.Response:
        raw = await request.read()
        from harness.channels.whatsapp import sign

        if mode != "trusting" and request.headers.get("X-Hub-Signature-256") != sign(raw, env["WHATSAPP_APP_SECRET"]):
            return web.Response(status=401)
        payload = json.loads(raw)
        for entry in payload.get("entry", []):
            for change in entry.get("changes", []):
                for m in change.get("value", {}).get("messages", []):
                    if mode != "silent" and m.get("type") == "text":
                        spawn(reply_whatsapp(m["from"], f"echo: {m['text']['body']}"))
        return web.Response(status=200)

    async def verify(request: web.Request) -> web.Response:
        # Meta's subscription handshake; without WHATSAPP_VERIFY_TOKEN (older configs) any token passes
        q = request.query
        token = env.get("WHATSAPP_VERIFY_TOKEN")
        if q.get("hub.mode") == "subscribe" and (token is None or q.get("hub.verify_token") == token):
            return web.Response(text=q.get("hub.challenge", ""))
        return web.Response(status=403)

    async def close(_app) -> None:
        for t in list(tasks):
            t.cancel()
        if "s" in sessions:
            await sessions["s"].close()

    app = web.Application()
    app.router.add_post("/telegram", telegram)
    app.router.add_post("/whatsapp", whatsapp)
    app.router.add_get("/whatsapp", verify)
    app.on_cleanup.append(close)
    return app


if __name__ == "__main__":  # the same agent as its own process (a command target): PORT from the environment
    import os

    web.run_app(make_app(dict(os.environ)), host="127.0.0.1", port=int(os.environ["PORT"]), print=None)
