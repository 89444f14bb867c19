"""A python-telegram-bot command bot: a test fixture, not harness code.

Written as a bot author would from PTB's docs, knowing nothing of the harness: it reads the
usual settings from the environment (TELEGRAM_API_BASE, TELEGRAM_BOT_TOKEN,
TELEGRAM_WEBHOOK_SECRET, PORT) and serves PTB's own webhook server.

- ``/start``: "Welcome! I book tables." with two inline buttons (``book``, ``hours``);
- the ``book`` button: how to book; the ``hours`` button: the opening hours (both answer the
  callback query, as Telegram wants);
- ``/book <day> <time>``: "Booked <day> at <time>." (for the name the user gave); fewer
  arguments: the usage line;
- ``/help``: the commands;
- any other text naming someone ("my name is Atlantis"): "Nice to meet you, Atlantis! ...";
  else "Sorry, I only understand /start, /book and /help."

    python -m tests.agents.ptb_commands
"""

from __future__ import annotations

import os
import re

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ApplicationBuilder, CallbackQueryHandler, CommandHandler, ContextTypes, MessageHandler, filters

NAME = re.compile(r"\b[A-Z][a-z]+\b")
NOT_NAMES = {"Hi", "Hello", "Hey", "Good", "Morning", "Thanks", "Please"}  # a greeting names nobody


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Book a table", callback_data="book"),
                                      InlineKeyboardButton("Opening hours", callback_data="hours")]])
    await update.message.reply_text("Welcome! I book tables.", reply_markup=keyboard)


async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    await query.answer()
    if query.data == "book":
        await query.message.reply_text("Send /book <day> <time>, e.g. /book Friday 19:00.")
    else:
        await query.message.reply_text("We are open 12:00-23:00 every day.")


async def book(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if len(context.args) < 2:
        await update.message.reply_text("Usage: /book <day> <time>")
        return
    day, time = context.args[0], context.args[1]
    who = context.user_data.get("name")
    await update.message.reply_text(f"Booked {day} at {time}" + (f" for {who}." if who else "."))


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.message.reply_text("Commands: /start, /book <day> <time>, /help.")


async def text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    names = [w for w in NAME.findall(update.message.text) if w not in NOT_NAMES]
    if names:
        context.user_data["name"] = names[-1]
        await update.message.reply_text(f"Nice to meet you, {names[-1]}! Send /book <day> <time> to book a table.")
    else:
        await update.message.reply_text("Sorry, I only understand /start, /book and /help.")


def build():
    base = os.environ.get("TELEGRAM_API_BASE", "https://api.telegram.org").rstrip("/")
    app = ApplicationBuilder().token(os.environ["TELEGRAM_BOT_TOKEN"]).base_url(f"{base}/bot").build()
    app.add_handler(CommandHandler("start", start))
    app.add_handler(CommandHandler("book", book))
    app.add_handler(CommandHandler("help", help_command))
    app.add_handler(CallbackQueryHandler(button))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, text))
    return app


def main() -> None:
    port = int(os.environ.get("PORT", "8089"))
    build().run_webhook(listen="127.0.0.1", port=port, url_path="telegram",
                        secret_token=os.environ.get("TELEGRAM_WEBHOOK_SECRET") or None,
                        webhook_url=f"http://127.0.0.1:{port}/telegram")


if __name__ == "__main__":
    main()
