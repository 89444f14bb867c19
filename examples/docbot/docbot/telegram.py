"""Telegram: the webhook (POST /telegram) and the Bot API client."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re

import aiohttp
from aiohttp import web

from . import keys
from .config import Config
from .logic import Incoming

log = logging.getLogger("docbot.telegram")

NON_TEXT_KEYS = ("photo", "sticker", "voice", "audio", "video", "video_note", "animation",
                 "location", "contact", "venue", "poll", "dice", "game", "story")


def _chat_ref(chat_id: str) -> int | str:
    return int(chat_id) if re.fullmatch(r"-?\d+", chat_id) else chat_id


class TelegramClient:
    def __init__(self, cfg: Config, http: aiohttp.ClientSession):
        self.cfg = cfg
        self.http = http

    async def call(self, method: str, payload: dict) -> dict | None:
        """A Bot API call; a 429 flood answer is retried once after its retry_after (max 5 s)."""
        self._flood_wait = None
        answer = await self._call_once(method, payload)
        if answer is None and self._flood_wait is not None:
            await asyncio.sleep(min(5.0, self._flood_wait))
            answer = await self._call_once(method, payload)
        return answer

    async def _call_once(self, method: str, payload: dict) -> dict | None:
        if not self.cfg.telegram_token:
            log.warning("TELEGRAM_BOT_TOKEN not set; %s not sent", method)
            return None
        url = f"{self.cfg.telegram_api_base}/bot{self.cfg.telegram_token}/{method}"
        try:
            async with self.http.post(url, json=payload,
                                      timeout=aiohttp.ClientTimeout(total=30)) as resp:
                body = await resp.text()
                if resp.status >= 400:
                    log.warning("Bot API %s -> HTTP %s %s", method, resp.status, body[:200])
                    if resp.status == 429:  # flood control: Telegram says how long to wait
                        try:
                            self._flood_wait = float(json.loads(body)["parameters"]["retry_after"])
                        except (ValueError, KeyError, TypeError):
                            self._flood_wait = 1.0
                    return None
                try:
                    return json.loads(body)
                except ValueError:
                    return None
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            log.warning("Bot API %s failed: %s", method, type(e).__name__)
            return None

    async def send(self, chat_id: str, text: str, buttons=()) -> None:
        payload = {"chat_id": _chat_ref(chat_id), "text": str(text)[:4096]}
        if buttons:  # an inline keyboard, one row per button: [(label, callback data), ...]
            payload["reply_markup"] = {"inline_keyboard": [[{"text": label, "callback_data": data}]
                                                           for label, data in buttons]}
        await self.call("sendMessage", payload)

    async def typing(self, chat_id: str) -> None:
        await self.call("sendChatAction", {"chat_id": _chat_ref(chat_id), "action": "typing"})

    async def answer_callback(self, callback_query_id: str) -> None:
        await self.call("answerCallbackQuery", {"callback_query_id": callback_query_id})

    async def setup(self) -> None:
        """getMe + setWebhook at startup; failures are only logged."""
        if not self.cfg.telegram_token:
            log.info("TELEGRAM_BOT_TOKEN not set; skipping getMe/setWebhook")
            return
        me = await self.call("getMe", {})
        log.info("getMe: %s", (me or {}).get("result", {}).get("username", "(failed)"))
        payload = {"url": f"{self.cfg.public_url}/telegram"}
        if self.cfg.telegram_secret:
            payload["secret_token"] = self.cfg.telegram_secret
        ok = await self.call("setWebhook", payload)
        log.info("setWebhook %s: %s", payload["url"], "ok" if ok and ok.get("ok") else "failed")


def parse_update(update: dict) -> tuple[Incoming | None, str | None]:
    """(message for the pipeline or None, callback_query id to answer or None)."""
    update_key = str(update.get("update_id"))
    msg = update.get("message") or update.get("edited_message")
    if isinstance(msg, dict):
        chat_id = str((msg.get("chat") or {}).get("id") or (msg.get("from") or {}).get("id"))
        if isinstance(msg.get("text"), str):
            return Incoming("telegram", chat_id, update_key, "text", msg["text"]), None
        if "document" in msg:
            return Incoming("telegram", chat_id, update_key, "upload"), None
        return Incoming("telegram", chat_id, update_key, "non_text"), None
    cq = update.get("callback_query")
    if isinstance(cq, dict):
        chat = ((cq.get("message") or {}).get("chat") or {}).get("id") or (cq.get("from") or {}).get("id")
        data = cq.get("data")
        return (Incoming("telegram", str(chat), update_key, "text", data if isinstance(data, str) else ""),
                str(cq.get("id")))
    return None, None


async def webhook(request: web.Request) -> web.Response:
    cfg: Config = request.app[keys.CFG]
    given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
    if not hmac.compare_digest(given.encode(), cfg.telegram_secret.encode()):
        log.info("update telegram rejected: wrong secret token")
        return web.json_response({"ok": False, "error": "unauthorized"}, status=401)
    try:
        update = json.loads(await request.read())
        if not isinstance(update, dict):
            raise ValueError
    except ValueError:
        return web.json_response({"ok": False, "error": "bad json"}, status=400)
    msg, callback_id = parse_update(update)
    pipeline = request.app[keys.PIPELINE]
    if msg is None:
        log.info("update telegram id=%s ignored (no message)", update.get("update_id"))
        return web.json_response({"ok": True})
    accepted = pipeline.submit(msg)
    if accepted and callback_id:
        pipeline.spawn(request.app[keys.TELEGRAM].answer_callback(callback_id))
    return web.json_response({"ok": True})
