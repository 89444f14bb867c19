"""A python-telegram-bot bot with a ConversationHandler: a test fixture, not harness code.

A plain PTB application, as a bot author would write it: it knows nothing about the
harness and only reads the usual settings from the environment (TELEGRAM_API_BASE,
TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET, PORT) and serves PTB's own webhook server.

Conversation: /start -> NAME ("What's your name?") -> AGE ("How old are you, <name>?"; not a
number: "Please send your age as a number." and stay) -> COLOUR (inline keyboard) -> done
("Thanks <name>! Age <n>, favourite colour <c>."). /cancel at any point: "Bye! Send /start
to begin again." Outside the conversation, any text: "Send /start to begin."

    python -m tests.agents.ptb_conversation
"""

from __future__ import annotations

import os
import warnings

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import (
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    ConversationHandler,
    MessageHandler,
    filters,
)
from telegram.warnings import PTBUserWarning

NAME, AGE, COLOUR = range(3)
COLOURS = ("red", "green", "blue")


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
    await update.message.reply_text("Hi! What's your name?")
    return NAME


async def name(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
    context.user_data["name"] = update.message.text.strip()
    await update.message.reply_text(f"How old are you, {context.user_data['name']}?")
    return AGE


async def age(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
    text = update.message.text.strip()
    if not text.isdigit():
        await update.message.reply_text("Please send your age as a number.")
        return AGE
    context.user_data["age"] = int(text)
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton(c, callback_data=c) for c in COLOURS]])
    await update.message.reply_text("Pick your favourite colour:", reply_markup=keyboard)
    return COLOUR


async def colour(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
    query = update.callback_query
    await query.answer()
    d = context.user_data
    await query.message.reply_text(f"Thanks {d['name']}! Age {d['age']}, favourite colour {query.data}.")
    return ConversationHandler.END


async def cancel(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
    context.user_data.clear()
    await update.message.reply_text("Bye! Send /start to begin again.")
    return ConversationHandler.END


async def fallback(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.message.reply_text("Send /start to begin.")


def build():
    base = os.environ.get("TELEGRAM_API_BASE", "https://api.telegram.org").rstrip("/")
    app = ApplicationBuilder().token(os.environ["TELEGRAM_BOT_TOKEN"]).base_url(f"{base}/bot").build()
    with warnings.catch_warnings():  # per_message=False with a CallbackQueryHandler is intended here
        warnings.simplefilter("ignore", PTBUserWarning)
        conversation = ConversationHandler(
            entry_points=[CommandHandler("start", start)],
            states={
                NAME: [MessageHandler(filters.TEXT & ~filters.COMMAND, name)],
                AGE: [MessageHandler(filters.TEXT & ~filters.COMMAND, age)],
                COLOUR: [CallbackQueryHandler(colour, pattern="^(red|green|blue)$")],
            },
            fallbacks=[CommandHandler("cancel", cancel)],
        )
    app.add_handler(conversation)
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, fallback))
    return app


def main() -> None:
    port = int(os.environ.get("PORT", "8088"))
    build().run_webhook(listen="127.0.0.1", port=port, url_path="telegram",
                        secret_token=os.environ.get("TELEGRAM_WEBHOOK_SECRET") or None,
                        webhook_url=f"http://127.0.0.1:{port}/telegram")


if __name__ == "__main__":
    main()
