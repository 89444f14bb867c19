"""End to end: a real python-telegram-bot Application against the emulator, driven by Updates.

This is the proof that the builders, the delivery and the emulator are what a real
framework accepts: PTB parses our Updates, answers through our Bot API, and its webhook
server's own rules (exact Content-Type, secret token) hold against ``deliver_update``.
"""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest

telegram = pytest.importorskip("telegram")
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update  # noqa: E402
from telegram.ext import (  # noqa: E402
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from harness.channels.telegram import BotApiEmulator, TelegramUpdates, deliver_update  # noqa: E402
from harness.sandbox.server import listen  # noqa: E402

TOKEN = "987654:PTB-test_token"
SECRET = "harness-secret_1"
CHAT = 31337


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    keyboard = InlineKeyboardMarkup(
        [[InlineKeyboardButton("Yes", callback_data="yes"), InlineKeyboardButton("No", callback_data="no")]]
    )
    await update.message.reply_text("Welcome! Continue?", reply_markup=keyboard)


async def _reverse(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await context.bot.send_chat_action(update.effective_chat.id, "typing")
    await update.message.reply_text(update.message.text[::-1])


async def _button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.callback_query.answer("noted")
    await update.callback_query.edit_message_text(f"You chose {update.callback_query.data}")


async def _wait_for(events, predicate, timeout: float = 3.0):
    """The first recorded event matching ``predicate`` (PTB answers after the webhook 200)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for ev in events:
            if predicate(ev):
                return ev
        await asyncio.sleep(0.01)
    raise AssertionError(f"no matching event; saw {[e.name for e in events]}")


async def test_python_telegram_bot_conversation():
    events: list = []
    emulator = BotApiEmulator(TOKEN, events.append)
    api = await listen(emulator.app(), "telegram")
    port = _free_port()
    hook_url = f"http://127.0.0.1:{port}/tg-hook"
    # PTB appends the token to base_url itself: ".../bot" + TOKEN
    app = ApplicationBuilder().token(TOKEN).base_url(f"{api.base_url}/bot").build()
    app.add_handler(CommandHandler("start", _start))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, _reverse))
    app.add_handler(CallbackQueryHandler(_button))
    updates = TelegramUpdates(500, message_ids=emulator.message_ids)
    try:
        async with app:  # initialize(): getMe against the emulator
            await app.updater.start_webhook(
                listen="127.0.0.1", port=port, url_path="tg-hook", webhook_url=hook_url, secret_token=SECRET
            )
            await app.start()
            try:
                assert emulator.bot_user["id"] == 987654
                async with aiohttp.ClientSession() as session:
                    # PTB registered its webhook with the emulator
                    async with session.get(f"{api.base_url}/bot{TOKEN}/getWebhookInfo") as resp:
                        info = (await resp.json())["result"]
                    assert info["url"] == hook_url and emulator.webhook.secret_token == SECRET

                    # a wrong or missing secret is refused by PTB itself
                    bad = await deliver_update(session, hook_url, updates.text(CHAT, "x"), "wrong", 2)
                    assert bad.status == 403
                    assert (await deliver_update(session, hook_url, updates.text(CHAT, "x"), None, 2)).status == 403

                    # 1. /start -> greeting with an inline keyboard
                    res = await deliver_update(session, hook_url, updates.text(CHAT, "/start"), SECRET, 2)
                    assert res.status == 200 and res.error == "" and res.webhook_reply is None
                    greet = await _wait_for(events, lambda e: e.reply is not None)
                    assert greet.name == "telegram.sendMessage" and greet.reply.text == "Welcome! Continue?"
                    assert greet.reply.buttons == ("Yes", "No") and greet.keys == (f"tg:{CHAT}",)

                    # 2. free text (emoji included) -> reversed, after a typing action
                    res = await deliver_update(session, hook_url, updates.text(CHAT, "hello 😀 bot"), SECRET, 2)
                    assert res.status == 200
                    echo = await _wait_for(events, lambda e: e.reply is not None and e is not greet)
                    assert echo.reply.text == "tob 😀 olleh"
                    assert int(echo.reply.message_id) > int(greet.reply.message_id)

                    # 3. press "Yes" under the greeting -> callback answered and message edited
                    press = updates.callback(CHAT, "yes", int(greet.reply.message_id), message_text="Welcome! Continue?")
                    assert (await deliver_update(session, hook_url, press, SECRET, 2)).status == 200
                    edit = await _wait_for(events, lambda e: e.reply is not None and e.reply.kind == "edit")
                    assert edit.reply.text == "You chose yes" and edit.reply.message_id == greet.reply.message_id
                    answer = await _wait_for(events, lambda e: e.name == "telegram.answerCallbackQuery")
                    assert answer.status == 200 and answer.keys == (f"tg:{CHAT}",)

                names = [e.name for e in events]
                assert names[0] == "telegram.getMe" and "telegram.setWebhook" in names
                assert "telegram.sendChatAction" in names
                assert all(e.status == 200 for e in events), [(e.name, e.error) for e in events if e.status != 200]
            finally:
                await app.updater.stop()
                await app.stop()
    finally:
        await api.stop()
