"""The driver: plays the user's side of the channel for one case.

It turns a turn (``send``, ``document``, ``edit``, ``callback``, ``redeliver``...) into
the update the real platform would deliver, posts it to the target's webhook exactly as
Telegram or Meta would (secret token header, HMAC signature), and records replies the
bot put in the webhook answer itself.
"""

from __future__ import annotations

import time
from typing import Any

import aiohttp

from harness.channels import telegram as tg
from harness.channels import whatsapp as wa
from harness.config import Config
from harness.run.delivery import CaseState, Delivery, Identity, make_identity
from harness.run.driver_faults import deliver_scripted, is_scripted
from harness.sandbox.router import Router
from harness.targets.base import Endpoints
from harness.textgen import render
from harness.types import Case, Event, Turn

class Driver:
    def __init__(self, config: Config, endpoints: Endpoints, router: Router, session: aiohttp.ClientSession,
                 placeholders: dict[str, str], whatsapp_emulator: Any = None):
        self.config = config
        self.whatsapp_emulator = whatsapp_emulator
        self.endpoints = endpoints
        self.router = router
        self.session = session
        self.placeholders = placeholders
        self.tg = tg.TelegramUpdates()
        sb = config.sandbox
        self.wa = wa.WhatsAppUpdates(sb.phone_number_id, sb.display_phone_number, "102290129340398")
        self._state: dict[int, CaseState] = {}

    def values_for(self, ident: Identity) -> dict[str, str]:
        values = dict(self.placeholders)
        values["docs"] = f"{self.placeholders['docs']}/c/{ident.doc_token}"
        return values

    def state_for(self, ident: Identity) -> CaseState:
        """What the driver remembers of this attempt's chat (last update, last message id)."""
        return self._state.setdefault(ident.chat_id, CaseState())

    def forget(self, ident: Identity) -> None:
        self._state.pop(ident.chat_id, None)

    async def deliver(self, case: Case, turn: Turn, ident: Identity, timeout: float,
                      last_bot_message_id: str = "") -> Delivery:
        if is_scripted(turn):  # bursts, duplicate / out-of-order delivery (harness/driver_faults.py)
            return await deliver_scripted(self, case, turn, ident, timeout, last_bot_message_id)
        state = self.state_for(ident)
        values = self.values_for(ident)
        text = render(turn.send, values) if turn.send is not None else None
        if case.channel == "telegram":
            update = self.telegram_update(turn, ident, state, text, last_bot_message_id)
            url = self.endpoints.telegram_webhook
        else:
            update = self.whatsapp_update(turn, ident, state, text, last_bot_message_id)
            url = self.endpoints.whatsapp_webhook
            self.note_whatsapp(update, ident)
        state.last_update = update
        sent_at = time.time()
        # The update itself is part of the record (reports show what the user sent).
        self.router.record(Event(source="driver", name=f"deliver.{case.channel}", at=sent_at, status=0,
                                 request=update, keys=(f"tg:{ident.chat_id}" if case.channel == "telegram"
                                                       else f"wa:{ident.wa_id}",)))
        if not url:
            return Delivery(None, f"no {case.channel} webhook configured for the target", sent_at, time.time())
        if case.channel == "telegram":
            result = await tg.deliver_update(self.session, url, update, self.config.secrets.webhook_secret, timeout)
            if result.webhook_reply:
                self.router.record(tg.webhook_reply_event(result.webhook_reply, time.time()))
        else:
            result = await wa.deliver_payload(self.session, url, update, self.config.secrets.app_secret, timeout)
        return Delivery(result.status, result.error, sent_at, time.time())

    def note_whatsapp(self, update: dict, ident: Identity) -> None:
        """Tell the Graph emulator who the user is, so replies addressed by BSUID or mark-reads
        of this message are attributed to the case (clients such as pywa answer by BSUID)."""
        if self.whatsapp_emulator is None:
            return
        self.whatsapp_emulator.note_user(ident.wa_id, self.wa.bsuid_of(ident.wa_id))
        for entry in update.get("entry", []):
            for change in entry.get("changes", []):
                for msg in change.get("value", {}).get("messages", []):
                    self.whatsapp_emulator.note_inbound(msg["id"], ident.wa_id)

    def telegram_update(self, turn: Turn, ident: Identity, state: CaseState, text: str | None,
                         bot_message_id: str) -> dict:
        chat = ident.chat_id
        if turn.kind == "redeliver":
            return self.tg.redeliver(state.last_update or {})
        if turn.kind == "text":
            update = self.tg.text(chat, text or "")
            state.last_message_id = update["message"]["message_id"]
            return update
        if turn.kind == "edit":
            return self.tg.edited(chat, state.last_message_id or 1, text or "")
        if turn.kind == "callback":
            return self.tg.callback(chat, text or "", int(bot_message_id) if bot_message_id.isdigit() else 1)
        opts = turn.options
        caption = render(str(opts["caption"]), self.values_for(ident)) if opts.get("caption") else None
        if turn.kind == "document":
            return self.tg.document(chat, opts["file_name"], opts["mime_type"], caption=caption)
        if turn.kind == "photo":
            return self.tg.photo(chat, caption=caption)
        if turn.kind == "sticker":
            return self.tg.sticker(chat, **({"emoji": opts["emoji"]} if "emoji" in opts else {}))
        raise ValueError(f"unknown turn kind {turn.kind!r}")

    def whatsapp_update(self, turn: Turn, ident: Identity, state: CaseState, text: str | None,
                         bot_message_id: str) -> dict:
        who = ident.wa_id
        if turn.kind == "redeliver":
            return self.wa.redeliver(state.last_update or {})
        if turn.kind == "text":
            return self.wa.text(who, text or "")
        if turn.kind == "callback":
            return self.wa.interactive_reply(who, text or "", text or "", bot_message_id or "wamid.unknown")
        opts = turn.options
        caption = render(str(opts["caption"]), self.values_for(ident)) if opts.get("caption") else None
        if turn.kind == "document":
            return self.wa.document(who, opts["file_name"], opts["mime_type"])
        if turn.kind == "photo":
            return self.wa.image(who, caption=caption)
        if turn.kind == "sticker":
            return self.wa.sticker(who)
        raise ValueError(f"unknown turn kind {turn.kind!r} for whatsapp")


__all__ = ["CaseState", "Delivery", "Driver", "Identity", "make_identity"]
