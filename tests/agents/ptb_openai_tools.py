"""A python-telegram-bot 22 shop assistant that calls its LLM through the official ``openai`` SDK
with function calling: a test fixture, not harness code.

Written as a bot author would write it from the two libraries' docs: it knows nothing about the
harness. It reads the usual settings from the environment (TELEGRAM_API_BASE, TELEGRAM_BOT_TOKEN,
TELEGRAM_WEBHOOK_SECRET, PORT, OPENAI_BASE_URL, OPENAI_API_KEY, SHOP_API) and its LLM calls carry
no ``user`` field, like most bots'. Its tools are HTTP services of the shop (SHOP_API/<tool>,
JSON in, JSON out), which the harness's tool double stands in for.

Conversation: any text goes to the model with the shop's two tools (``create_order``,
``order_status``); the model's tool calls are run against the shop API and their results sent
back until the model answers in text, which is the reply. A 429 or 5xx from the model is
retried up to three times, waiting the answer's Retry-After (or 1 s) first. ``/start`` greets.

Seeded bugs (SHOP_BUG, for the harness's own tests):
- ``pricier_model``: every call goes to gpt-4o instead of gpt-4o-mini (about 16x the price);
- ``wrong_args``: create_order is always sent quantity 1, whatever the model asked for;
- ``ignore_retry_after``: a failed model call is retried after 50 ms, not after Retry-After.
SHOP_STREAM=1 streams completions (with ``stream_options.include_usage``; SHOP_STREAM=nousage
streams without asking for usage).

    python -m tests.agents.ptb_openai_tools
"""

from __future__ import annotations

import asyncio
import json
import os

import httpx
import openai
from telegram import Update
from telegram.ext import ApplicationBuilder, CommandHandler, ContextTypes, MessageHandler, filters

BUG = os.environ.get("SHOP_BUG", "")
STREAM = os.environ.get("SHOP_STREAM", "")
MODEL = "gpt-4o" if BUG == "pricier_model" else "gpt-4o-mini"
SHOP_API = os.environ.get("SHOP_API", "http://127.0.0.1:9000").rstrip("/")
SYSTEM = ("You are the assistant of a small widget shop. Use create_order to place orders and "
          "order_status to look one up. Answer briefly.")
TOOLS = [
    {"type": "function", "function": {
        "name": "create_order", "description": "Place an order for an item.",
        "parameters": {"type": "object", "properties": {
            "item": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}},
            "required": ["item", "quantity"]}}},
    {"type": "function", "function": {
        "name": "order_status", "description": "Look up an order by its id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}},
]

llm = openai.AsyncOpenAI(base_url=os.environ.get("OPENAI_BASE_URL"),
                         api_key=os.environ.get("OPENAI_API_KEY", "sk-test"), max_retries=0, timeout=20)
shop = httpx.AsyncClient(timeout=10)


async def complete(messages: list[dict]) -> dict:
    """One model answer as a plain message dict (content, tool_calls), retried on 429/5xx."""
    for attempt in range(4):
        try:
            if STREAM:
                return await _streamed(messages)
            resp = await llm.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
            msg = resp.choices[0].message
            return {"role": "assistant", "content": msg.content,
                    "tool_calls": [{"id": c.id, "type": "function",
                                    "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                   for c in msg.tool_calls or ()]}
        except openai.APIStatusError as exc:
            if attempt == 3 or not (exc.status_code == 429 or exc.status_code >= 500):
                raise
            wait = float(exc.response.headers.get("retry-after") or 1)
            await asyncio.sleep(0.05 if BUG == "ignore_retry_after" else wait)
    raise RuntimeError("unreachable")


async def _streamed(messages: list[dict]) -> dict:
    extra = {"stream_options": {"include_usage": True}} if STREAM != "nousage" else {}
    stream = await llm.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, stream=True, **extra)
    text, calls = [], {}
    async for chunk in stream:
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
            for tc in delta.tool_calls or ():
                call = calls.setdefault(tc.index, {"id": "", "type": "function",
                                                   "function": {"name": "", "arguments": ""}})
                call["id"] = tc.id or call["id"]
                if tc.function is not None:
                    call["function"]["name"] += tc.function.name or ""
                    call["function"]["arguments"] += tc.function.arguments or ""
    return {"role": "assistant", "content": "".join(text) or None, "tool_calls": [calls[i] for i in sorted(calls)]}


async def run_tool(name: str, arguments: str) -> str:
    args = json.loads(arguments or "{}")
    if BUG == "wrong_args" and name == "create_order":
        args["quantity"] = 1
    resp = await shop.post(f"{SHOP_API}/{name}", json=args)
    return resp.text


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.message.reply_text("Hi! I can place widget orders and look them up.")


async def chat(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    messages: list[dict] = [{"role": "system", "content": SYSTEM},
                            {"role": "user", "content": update.message.text}]
    try:
        for _ in range(5):
            answer = await complete(messages)
            if not answer["tool_calls"]:
                await update.message.reply_text(answer["content"] or "(no answer)")
                return
            messages.append({k: v for k, v in answer.items() if v})
            for call in answer["tool_calls"]:
                result = await run_tool(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        await update.message.reply_text("Sorry, that took too many steps.")
    except (openai.OpenAIError, httpx.HTTPError, ValueError):
        await update.message.reply_text("Sorry, the assistant is unavailable right now. Please try again later.")


def build():
    base = os.environ.get("TELEGRAM_API_BASE", "https://api.telegram.org").rstrip("/")
    app = ApplicationBuilder().token(os.environ["TELEGRAM_BOT_TOKEN"]).base_url(f"{base}/bot").build()
    app.add_handler(CommandHandler("start", start))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, chat))
    return app


def main() -> None:
    port = int(os.environ.get("PORT", "8088"))
    build().run_webhook(listen="127.0.0.1", port=port, url_path="telegram",
                        secret_token=os.environ.get("TELEGRAM_WEBHOOK_SECRET") or None,
                        webhook_url=f"http://127.0.0.1:{port}/telegram")


if __name__ == "__main__":
    main()
