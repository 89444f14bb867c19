"""An aiogram 3 bot that answers in HTML: a test fixture, not harness code.

aiogram's own pieces only: ``AiohttpSession`` pointed at TELEGRAM_API_BASE, the bot's default
``parse_mode`` HTML, ``SimpleRequestHandler`` with the webhook secret. Any text gets
"You picked <b>Tuesday</b>" (the user reads "You picked Tuesday", Tuesday in bold). With
BOT_BROKEN=1 the tag is left open, which Telegram refuses with 400 "can't parse entities".
A callback press is answered ("Noted") and its button's data repeated. Locations, contacts,
voice and audio, forwarded texts, replies, edits and reactions are each described back (the
harness's turn actions run against it).

    python tests/channels/bots/aiogram_html.py
"""

from __future__ import annotations

import os

from aiogram import Bot, Dispatcher, F
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message, MessageReactionUpdated
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

dp = Dispatcher()


@dp.message(F.forward_origin)
async def forwarded(message: Message) -> None:
    origin = message.forward_origin
    name = getattr(origin, "sender_user_name", None) or getattr(getattr(origin, "sender_user", None), "first_name", "")
    await message.answer(f"Forwarded from {name}: {message.text}", parse_mode=None)


@dp.message(F.reply_to_message)
async def replied(message: Message) -> None:
    quoted = message.reply_to_message
    who = "my" if quoted.from_user and quoted.from_user.is_bot else "your"
    await message.answer(f"You replied to {who} message {quoted.message_id}: {quoted.text}", parse_mode=None)


@dp.message(F.location)
async def located(message: Message) -> None:
    await message.answer(f"Location {message.location.latitude:.2f},{message.location.longitude:.2f}")


@dp.message(F.contact)
async def contact(message: Message) -> None:
    await message.answer(f"Contact {message.contact.first_name} {message.contact.phone_number}")


@dp.message(F.voice | F.audio)
async def heard(message: Message) -> None:
    media = message.voice or message.audio
    await message.answer(f"{'Voice' if message.voice else 'Audio'} of {media.duration}s")


@dp.edited_message(F.text)
async def edited(message: Message) -> None:
    await message.answer(f"Edited to: {message.text}", parse_mode=None)


@dp.message_reaction()
async def reacted(event: MessageReactionUpdated) -> None:
    emoji = [r.emoji for r in event.new_reaction if getattr(r, "emoji", None)]
    await event.bot.send_message(event.chat.id, f"Reaction {''.join(emoji)} on {event.message_id}")


@dp.message(F.text)
async def pick(message: Message) -> None:
    closing = "" if os.environ.get("BOT_BROKEN") == "1" else "</b>"
    keyboard = InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text="Change", callback_data="change")]])
    await message.answer(f"You picked <b>Tuesday{closing} &amp; <i>10:00</i>", reply_markup=keyboard)


@dp.callback_query()
async def press(query: CallbackQuery) -> None:
    await query.answer("Noted")
    await query.message.answer(f"You pressed <code>{query.data}</code>")


def main() -> None:
    session = AiohttpSession(api=TelegramAPIServer.from_base(os.environ["TELEGRAM_API_BASE"].rstrip("/")))
    bot = Bot(os.environ["TELEGRAM_BOT_TOKEN"], session=session,
              default=DefaultBotProperties(parse_mode=ParseMode.HTML))
    app = web.Application()
    SimpleRequestHandler(dispatcher=dp, bot=bot,
                         secret_token=os.environ.get("TELEGRAM_WEBHOOK_SECRET") or None).register(app, path="/telegram")
    setup_application(app, dp, bot=bot)
    web.run_app(app, host="127.0.0.1", port=int(os.environ["PORT"]), print=None)


if __name__ == "__main__":
    main()
