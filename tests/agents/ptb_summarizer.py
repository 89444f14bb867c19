"""A python-telegram-bot 22 document summarizer that calls its LLM through the official ``openai``
SDK: a test fixture, not harness code, written from the two libraries' docs alone.

A document the user sends is fetched the way PTB's docs show (``bot.get_file`` then
``File.download_as_bytearray``, from ``base_file_url``), its text sent to the model with a short
instruction, and the model's answer is the reply. Settings from the environment:
TELEGRAM_API_BASE, TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET, PORT, OPENAI_BASE_URL, OPENAI_API_KEY.

    python -m tests.agents.ptb_summarizer
"""

from __future__ import annotations

import os

import openai
from telegram import Update
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

llm = openai.AsyncOpenAI(base_url=os.environ.get("OPENAI_BASE_URL"), api_key=os.environ.get("OPENAI_API_KEY", "x"))


async def summarize(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    doc = update.message.document
    try:
        file = await context.bot.get_file(doc.file_id)
        data = bytes(await file.download_as_bytearray())
        if doc.mime_type == "application/pdf":  # pypdf, as its docs show
            import io

            from pypdf import PdfReader

            text = "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)
        else:
            text = data.decode("utf-8", "replace")
    except Exception as exc:  # noqa: BLE001 - the user hears about it
        await update.message.reply_text(f"Sorry, I could not read {doc.file_name}: {exc}")
        return
    answer = await llm.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "system", "content": "Summarize the user's document in two sentences."},
        {"role": "user", "content": text[:20000]}])
    await update.message.reply_text((answer.choices[0].message.content or "(no summary)")[:4000])  # Telegram: 4096


def main() -> None:
    base = os.environ.get("TELEGRAM_API_BASE", "https://api.telegram.org").rstrip("/")
    app = (ApplicationBuilder().token(os.environ["TELEGRAM_BOT_TOKEN"]).base_url(f"{base}/bot")
           .base_file_url(f"{base}/file/bot").build())
    app.add_handler(MessageHandler(filters.Document.ALL, summarize))
    port = int(os.environ.get("PORT", "8088"))
    app.run_webhook(listen="127.0.0.1", port=port, url_path="telegram",
                    secret_token=os.environ.get("TELEGRAM_WEBHOOK_SECRET") or None,
                    webhook_url=f"http://127.0.0.1:{port}/telegram")


if __name__ == "__main__":
    main()
