"""A test double agent (labelled as such): a shop bot that answers Telegram through the official
``openai`` (default) or ``anthropic`` SDK with function calling, written as users write theirs:
no ``user`` field on its calls, its one tool (``create_order``) run in process.

Env: OPENAI_BASE_URL / ANTHROPIC_BASE_URL (the harness's {llm_base_url} / {anthropic_base_url}),
LLM_PROVIDER (openai | anthropic), LLM_MODEL, LLM_STREAM ("1": streamed completions).
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
from aiohttp import web

TARGET_ENV = """
[target.env]
TELEGRAM_API_BASE = "{telegram_api}"
TELEGRAM_BOT_TOKEN = "{bot_token}"
TELEGRAM_WEBHOOK_SECRET = "{webhook_secret}"
OPENAI_BASE_URL = "{llm_base_url}"
ANTHROPIC_BASE_URL = "{anthropic_base_url}"
"""
SYSTEM = "You are a shop assistant. Use create_order to place orders."
PARAMS = {"type": "object", "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}},
          "required": ["item", "quantity"]}


def create_order(args: dict) -> dict:
    return {"id": "A-17", "status": "created", "quantity": args.get("quantity")}


async def _openai_turn(client, model: str, text: str, stream: bool) -> str:
    tools = [{"type": "function", "function": {"name": "create_order", "parameters": PARAMS}}]
    msgs: list = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    for _ in range(4):
        if stream:
            s = await client.chat.completions.create(model=model, messages=msgs, tools=tools, stream=True)
            content, calls = "", {}
            async for chunk in s:
                for ch in chunk.choices:
                    content += ch.delta.content or getattr(ch.delta, "refusal", None) or ""
                    for tc in ch.delta.tool_calls or ():
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = slot["id"] or tc.id or ""
                        slot["name"] += tc.function.name or ""
                        slot["arguments"] += tc.function.arguments or ""
            tool_calls = [{"id": c["id"], "type": "function",
                           "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls.values()]
        else:
            r = await client.chat.completions.create(model=model, messages=msgs, tools=tools)
            m = r.choices[0].message
            content = m.content or m.refusal or ""
            tool_calls = [tc.model_dump() for tc in m.tool_calls or ()]
        if not tool_calls:
            return content
        msgs.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
        for tc in tool_calls:
            result = create_order(json.loads(tc["function"]["arguments"] or "{}"))
            msgs.append({"role": "tool", "tool_call_id": tc["id"], "content": json.dumps(result)})
    return "too many tool rounds"


async def _anthropic_turn(client, model: str, text: str) -> str:
    tools = [{"name": "create_order", "input_schema": PARAMS}]
    msgs: list = [{"role": "user", "content": text}]
    for _ in range(4):
        m = await client.messages.create(model=model, max_tokens=300, system=SYSTEM, tools=tools, messages=msgs)
        uses = [b for b in m.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in m.content if b.type == "text")
        msgs.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in m.content]})
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id,
                                                  "content": json.dumps(create_order(u.input))} for u in uses]})
    return "too many tool rounds"


def make_app(env: dict) -> web.Application:
    tg_base = f"{env['TELEGRAM_API_BASE']}/bot{env['TELEGRAM_BOT_TOKEN']}"
    provider = env.get("LLM_PROVIDER", "openai")
    model = env.get("LLM_MODEL", "gpt-4o-mini")
    stream = env.get("LLM_STREAM") == "1"
    state: dict = {}
    tasks: set = set()

    async def answer(chat_id: int, text: str) -> None:
        try:
            if provider == "anthropic":
                import anthropic

                client = state.setdefault("a", anthropic.AsyncAnthropic(base_url=env["ANTHROPIC_BASE_URL"],
                                                                        api_key="sk-ant-none", max_retries=0))
                reply = await _anthropic_turn(client, model, text)
            else:
                import openai

                client = state.setdefault("o", openai.AsyncOpenAI(base_url=env["OPENAI_BASE_URL"], api_key="sk-none",
                                                                  max_retries=0))
                reply = await _openai_turn(client, model, text, stream)
        except Exception as exc:  # the bot's own error message, as a real bot would send
            reply = f"sorry, something went wrong ({type(exc).__name__})"
        if "s" not in state:
            state["s"] = aiohttp.ClientSession()
        async with state["s"].post(f"{tg_base}/sendMessage", json={"chat_id": chat_id, "text": reply}) as r:
            await r.read()

    async def telegram(request: web.Request) -> web.Response:
        if request.headers.get("X-Telegram-Bot-Api-Secret-Token") != env["TELEGRAM_WEBHOOK_SECRET"]:
            return web.Response(status=401)
        msg = (await request.json()).get("message") or {}
        if "text" in msg:
            task = asyncio.get_running_loop().create_task(answer(msg["chat"]["id"], msg["text"]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return web.Response(status=200)

    async def _ok(_request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def close(_app) -> None:
        for t in list(tasks):
            t.cancel()
        for key in ("s", "o", "a"):
            if key in state:
                await state[key].close()

    app = web.Application()
    app.router.add_post("/telegram", telegram)
    app.router.add_post("/whatsapp", _ok)
    app.on_cleanup.append(close)
    return app
