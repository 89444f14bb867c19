"""WhatsApp Cloud API: the webhook (GET handshake, POST messages) and the Graph API client."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging

import aiohttp
from aiohttp import web

from . import keys
from .config import Config
from .logic import Incoming

log = logging.getLogger("docbot.whatsapp")


class WhatsAppClient:
    def __init__(self, cfg: Config, http: aiohttp.ClientSession):
        self.cfg = cfg
        self.http = http

    async def send(self, to: str, text: str, buttons=()) -> None:
        c = self.cfg
        if not c.whatsapp_phone_id:
            log.warning("WHATSAPP_PHONE_NUMBER_ID not set; message to %s not sent", to)
            return
        url = f"{c.whatsapp_api_base}/{c.whatsapp_api_version}/{c.whatsapp_phone_id}/messages"
        payload = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": str(to),
                   "type": "text", "text": {"preview_url": False, "body": str(text)[:4096]}}
        if buttons:  # reply buttons (at most 3, titles up to 20 characters)
            payload["type"] = "interactive"
            del payload["text"]
            payload["interactive"] = {"type": "button", "body": {"text": str(text)[:1024]},
                                      "action": {"buttons": [{"type": "reply", "reply": {"id": data[:256],
                                                              "title": label[:20]}} for label, data in buttons[:3]]}}
        try:
            async with self.http.post(url, json=payload,
                                      headers={"Authorization": f"Bearer {c.whatsapp_token}"},
                                      timeout=aiohttp.ClientTimeout(total=30)) as resp:
                if resp.status >= 400:
                    log.warning("Graph API send -> HTTP %s %s", resp.status,
                                (await resp.text())[:200])
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            log.warning("Graph API send failed: %s", type(e).__name__)

    async def typing(self, to: str) -> None:
        """WhatsApp has no separate chat action for this; nothing is sent."""


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    if not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header[len("sha256="):].strip().lower())


def parse_payload(payload: dict) -> list[Incoming]:
    out: list[Incoming] = []
    for entry in payload.get("entry") or []:
        for change in (entry or {}).get("changes") or []:
            value = (change or {}).get("value") or {}
            for m in value.get("messages") or []:
                wa_id, key, typ = str(m.get("from")), str(m.get("id")), m.get("type")
                if typ == "text":
                    out.append(Incoming("whatsapp", wa_id, key, "text",
                                        str((m.get("text") or {}).get("body") or "")))
                elif typ == "interactive":
                    inter = m.get("interactive") or {}
                    reply = inter.get("button_reply") or inter.get("list_reply") or {}
                    out.append(Incoming("whatsapp", wa_id, key, "text",
                                        str(reply.get("title") or reply.get("id") or "")))
                elif typ == "button":
                    b = m.get("button") or {}
                    out.append(Incoming("whatsapp", wa_id, key, "text",
                                        str(b.get("text") or b.get("payload") or "")))
                elif typ == "document":
                    out.append(Incoming("whatsapp", wa_id, key, "upload"))
                else:
                    out.append(Incoming("whatsapp", wa_id, key, "non_text"))
    return out


async def verify(request: web.Request) -> web.Response:
    cfg: Config = request.app[keys.CFG]
    q = request.query
    if (q.get("hub.mode") == "subscribe" and cfg.whatsapp_verify_token
            and hmac.compare_digest(q.get("hub.verify_token", ""), cfg.whatsapp_verify_token)):
        log.info("whatsapp webhook verified")
        return web.Response(text=q.get("hub.challenge", ""))
    return web.Response(status=403, text="forbidden")


async def webhook(request: web.Request) -> web.Response:
    cfg: Config = request.app[keys.CFG]
    body = await request.read()
    if not signature_ok(cfg.whatsapp_app_secret, body, request.headers.get("X-Hub-Signature-256")):
        log.info("update whatsapp rejected: bad or missing X-Hub-Signature-256")
        return web.Response(status=401, text="invalid signature")
    try:
        payload = json.loads(body)
        if not isinstance(payload, dict):
            raise ValueError
    except ValueError:
        return web.Response(status=400, text="bad json")
    messages = parse_payload(payload)
    if not messages:
        log.info("update whatsapp ignored (statuses or no messages)")
    for msg in messages:
        request.app[keys.PIPELINE].submit(msg)
    return web.Response(text="ok")
