"""A python-telegram-bot bot that answers in MarkdownV2: a test fixture, not harness code.

It knows nothing of the harness: it reads TELEGRAM_API_BASE, TELEGRAM_BOT_TOKEN,
TELEGRAM_WEBHOOK_SECRET and PORT and serves PTB's own webhook server. Any text gets
"Done. Your total is *42 EUR*." with parse_mode MarkdownV2. With BOT_ESCAPE=1 the dots are
escaped ("Done\\. ...") as MarkdownV2 requires; without it Telegram refuses the message with
400 "can't parse entities" and the user gets nothing, which is what the case must catch.

    python tests/channels/bots/ptb_markdown.py
"""

from __future__ import annotations

import os

from telegram import Update
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters


async def total(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if os.environ.get("BOT_ESCAPE") == "1":
        text = "Done\\. Your total is *42 EUR*\\."
    else:
        text = "Done. Your total is *42 EUR*."
    await update.message.reply_text(text, parse_mode="MarkdownV2")


def main() -> None:
    port = int(os.environ["PORT"])
    base = os.environ["TELEGRAM_API_BASE"].rstrip("/")
    app = ApplicationBuilder().token(os.environ["TELEGRAM_BOT_TOKEN"]).base_url(f"{base}/bot").build()
    app.add_handler(MessageHandler(filters.TEXT, total))
    app.run_webhook(listen="127.0.0.1", port=port, url_path="telegram",
                    secret_token=os.environ.get("TELEGRAM_WEBHOOK_SECRET") or None,
                    webhook_url=f"http://127.0.0.1:{port}/telegram")


if __name__ == "__main__":
    main()
