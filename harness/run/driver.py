"""The driver: plays the user's side of the channel for one case.

It turns a turn (``send``, ``document``, ``edit``, ``callback``, ``redeliver``, ``location``,
``reaction``, ``forged``...) into the update the real platform would deliver, posts it to the
target's webhook exactly as Telegram or Meta would (secret token header, HMAC signature), and
records replies the bot put in the webhook answer itself. On WhatsApp it also plays Meta's
side after the agent sends: ``statuses`` webhooks (sent, delivered, read; failed with its
error), and the GET verification handshake before the first case (``handshake``).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path
from typing import Any, Sequence

import aiohttp

from harness.channels import telegram as tg
from harness.channels import whatsapp as wa
from harness.config import Config
from harness.errors import TargetError
from harness.run.delivery import CaseState, Delivery, Identity, make_identity
from harness.run.driver_faults import deliver_scripted, is_scripted
from harness.run.inbound import InboundFiles
from harness.sandbox.router import Router
from harness.targets.base import Endpoints
from harness.textgen import render
from harness.types import Case, Event, Reply, Turn

#: Seconds after an accepted send at which Meta's statuses webhooks arrive (small, realistic:
#: sent within a second, delivered when the phone is online, read when the user looks).
STATUS_DELAYS: tuple[tuple[str, float], ...] = (("sent", 0.15), ("delivered", 0.35), ("read", 0.8))
FAILED_DELAY = 0.3

class Driver:
    def __init__(self, config: Config, endpoints: Endpoints, router: Router, session: aiohttp.ClientSession,
                 placeholders: dict[str, str], whatsapp_emulator: Any = None, telegram_emulator: Any = None):
        self.config = config
        self.whatsapp_emulator = whatsapp_emulator
        self.telegram_emulator = telegram_emulator
        docs = Path(config.resolve(config.sandbox.docs_dir)) if config.sandbox.docs_dir else None
        self.inbound = InboundFiles(docs if docs is not None and docs.is_dir() else None, router,
                                    telegram_emulator, whatsapp_emulator)
        self.endpoints = endpoints
        self.router = router
        self.session = session
        self.placeholders = placeholders
        # One message id sequence per chat for the user's and the bot's messages, as in Telegram
        # (a reply or a reaction names an id that means one message), and the emulator's bot user.
        self.tg = (tg.TelegramUpdates(message_ids=telegram_emulator.message_ids, bot_user=telegram_emulator.bot_user)
                   if telegram_emulator is not None else tg.TelegramUpdates())
        sb = config.sandbox
        self.wa = wa.WhatsAppUpdates(sb.phone_number_id, sb.display_phone_number, "102290129340398")
        self._state: dict[int, CaseState] = {}
        #: statuses webhooks posted: (wamid, status, HTTP answer or None)
        self.status_log: list[tuple[str, str, int | None]] = []
        self._status_tasks: set[asyncio.Task] = set()
        self._last_signature = ""
        self.verified: wa.VerifyResult | None = None  # the handshake's outcome (no case owns it)
        if whatsapp_emulator is not None:
            whatsapp_emulator.on_sent = self.send_statuses

    # -- WhatsApp: Meta's side of the webhook ------------------------------------------
    async def handshake(self, cases: Sequence[Case]) -> None:
        """Meta's GET verification of the WhatsApp webhook, once before the first case that uses
        WhatsApp; a webhook that does not echo the challenge is a start-up error (exit 4)."""
        url = self.endpoints.whatsapp_webhook
        if not url or not any(c.channel == "whatsapp" for c in cases):
            return
        result = self.verified = await wa.verify_webhook(self.session, url, self.config.secrets.verify_token,
                                                         timeout=10)
        if not result.ok:
            raise TargetError(f"the WhatsApp webhook {url} failed Meta's verification handshake: {result.error}",
                              fix="answer GET ?hub.mode=subscribe&hub.verify_token=...&hub.challenge=... with 200 "
                                  "and the challenge as the body when the token is WHATSAPP_VERIFY_TOKEN "
                                  "({verify_token} in [target.env])")

    def send_statuses(self, wa_id: str, wamid: str, errors: list[dict[str, Any]] | None) -> None:
        """Called by the Graph emulator after an accepted send: post ``statuses`` webhooks later."""
        url = self.endpoints.whatsapp_webhook
        if not url or self.session.closed:
            return
        plan = [("failed", FAILED_DELAY)] if errors else list(STATUS_DELAYS)
        task = asyncio.get_running_loop().create_task(self._post_statuses(url, wa_id, wamid, plan, errors))
        self._status_tasks.add(task)
        task.add_done_callback(self._status_tasks.discard)

    async def _post_statuses(self, url: str, wa_id: str, wamid: str, plan, errors) -> None:
        waited = 0.0
        for status, at in plan:
            await asyncio.sleep(max(0.0, at - waited))
            waited = at
            if self.session.closed:
                return
            payload = self.wa.status(wa_id, wamid, status, errors if status == "failed" else None)
            result = await wa.deliver_payload(self.session, url, payload, self.config.secrets.app_secret, 5.0)
            self.status_log.append((wamid, status, result.status))

    # -- what the chat remembers ------------------------------------------------------
    def _replies(self, channel: str, chat: str) -> list[tuple[float, Reply]]:
        """The agent's accepted messages to ``chat`` so far, oldest first."""
        rec = self.router.recorder(("tg:" if channel == "telegram" else "wa:") + chat)
        return [(e.at, e.reply) for _, e in (rec.events if rec is not None else ())
                if e.reply is not None and e.reply.channel == channel and e.reply.chat == chat and e.status < 300]

    def _window(self, state: CaseState, turn: int) -> tuple[float, float]:
        sent = state.extra.get("sent_at", {})
        start = sent.get(turn, 0.0)
        later = [t for i, t in sent.items() if i > turn]
        return start, min(later) if later else float("inf")

    def bot_message(self, channel: str, ident: Identity, state: CaseState, *, turn: int | None = None,
                    data: str | None = None) -> tuple[Reply | None, tuple[str, str] | None]:
        """The agent's latest message (of ``turn``'s replies, when given), and with ``data`` the
        latest one whose keyboard offers it: (message, (button data or id, title))."""
        start, end = self._window(state, turn) if turn is not None else (0.0, float("inf"))
        found = [r for at, r in self._replies(channel, ident.chat_for(channel)) if start <= at < end]
        for reply in reversed(found):
            if data is None:
                return reply, None
            for value, title in _options(reply):
                if data in (value, title):
                    return reply, (value, title)
        return None, None

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
        index = next((i for i, t in enumerate(case.turns) if t is turn), -1)
        state.extra["index"] = index
        state.extra.setdefault("sent_at", {})[index] = time.time()
        values = self.values_for(ident)
        text = render(turn.send, values) if turn.send is not None else None
        if case.channel == "telegram":
            update = self.telegram_update(turn, ident, state, text, last_bot_message_id)
            url = self.endpoints.telegram_webhook
        else:
            update = self.whatsapp_update(turn, ident, state, text, last_bot_message_id)
            url = self.endpoints.whatsapp_webhook
        self.note_update(case.channel, update, ident, turn)
        state.last_update = update
        sent_at = time.time()
        forged = str(turn.options.get("signature", "")) if turn.kind == "forged" else ""
        # The update itself is part of the record (reports show what the user sent).
        self.router.record(Event(source="driver", name=f"deliver.{case.channel}", at=sent_at, status=0,
                                 request=update, keys=(f"tg:{ident.chat_id}" if case.channel == "telegram"
                                                       else f"wa:{ident.wa_id}",),
                                 meta={"forged": forged} if forged else {}))
        if not url:
            return Delivery(None, f"no {case.channel} webhook configured for the target", sent_at, time.time())
        secrets_ = self.config.secrets
        if case.channel == "telegram":
            secret = secrets_.webhook_secret
            if forged:  # a stale secret is the one the bot used before a rotation: same shape, wrong value
                secret = {"missing": None, "stale": (secret or "")[::-1] + "0",
                          "forged": "forged-" + secrets.token_hex(8)}[forged]
            result = await tg.deliver_update(self.session, url, update, secret, timeout)
            if result.webhook_reply:
                self.router.record(tg.webhook_reply_event(result.webhook_reply, time.time()))
        else:
            body_signature = None
            app_secret = secrets_.app_secret
            if forged == "missing":
                app_secret = None
            elif forged == "forged":
                app_secret = "forged-" + secrets.token_hex(8)
            elif forged == "stale":  # a real signature, replayed from an earlier delivery's body
                body_signature = self._last_signature or wa.sign(b"{}", app_secret or "")
            result = await wa.deliver_payload(self.session, url, update, app_secret, timeout, signature=body_signature)
            if not forged and app_secret:
                self._last_signature = wa.sign(wa.encode_payload(update), app_secret)
        return Delivery(result.status, result.error, sent_at, time.time())

    def note_update(self, channel: str, update: dict, ident: Identity, turn: Turn) -> None:
        """What the emulators need of an update before it is delivered: the bytes of the files it
        sends (run/inbound.py) and, on WhatsApp, who sent it (``note_whatsapp``)."""
        self.inbound.note(channel, update, ident, turn)
        if channel == "whatsapp":
            self.note_whatsapp(update, ident)

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
                    # (the user's media, which the bot may send back by id: noted with its bytes, note_update)

    def telegram_update(self, turn: Turn, ident: Identity, state: CaseState, text: str | None,
                         bot_message_id: str) -> dict:
        chat = ident.chat_id
        opts = turn.options
        if turn.kind == "redeliver":
            return self.tg.redeliver(state.last_update or {})
        if turn.kind in ("text", "forward", "forged"):
            if turn.kind == "forward":
                update = self.tg.forwarded(chat, text or "", sender_name=str(opts.get("from") or "Alice Example"))
            else:
                update = self.tg.text(chat, text or "")
            state.last_message_id = update["message"]["message_id"]
            self._remember(state, update["message"]["message_id"], text or "")
            if "reply_to" in opts:
                quoted = self._quoted_telegram(ident, state, opts["reply_to"])
                if quoted is not None:
                    self.tg.reply_to(update, quoted)
            return update
        if turn.kind == "edit":
            return self.tg.edited(chat, state.last_message_id or 1, text or "")
        if turn.kind == "callback":
            message, button = self.bot_message("telegram", ident, state, turn=opts.get("turn"), data=text or "")
            if message is None:  # no keyboard offers it: press it on the latest message, as before
                return self.tg.callback(chat, text or "", int(bot_message_id) if bot_message_id.isdigit() else 1)
            update = self.tg.callback(chat, button[0], int(message.message_id or 1), message_text=message.text)
            markup = message.raw.get("reply_markup")
            if isinstance(markup, dict) and "inline_keyboard" in markup:
                update["callback_query"]["message"]["reply_markup"] = markup
            if message.entities:
                update["callback_query"]["message"]["entities"] = [dict(e) for e in message.entities]
            return update
        if turn.kind == "location":
            return self.tg.location(chat, opts["latitude"], opts["longitude"], live_period=opts.get("live_period"),
                                    title=opts.get("title"), address=opts.get("address"))
        if turn.kind == "contact":
            return self.tg.contact(chat, str(opts["phone_number"]), str(opts["first_name"]),
                                   opts.get("last_name"), opts.get("user_id"))
        if turn.kind in ("audio", "voice"):
            return self.tg.audio(chat, voice=turn.kind == "voice", duration=opts.get("duration", 7),
                                 mime_type=opts.get("mime_type"), file_name=opts.get("file_name"),
                                 caption=opts.get("caption"))
        if turn.kind == "reaction":
            target = self._reaction_target(ident, state, opts.get("to", "bot"), "telegram", bot_message_id)
            return self.tg.reaction(chat, int(target) if str(target).isdigit() else 1, str(opts["emoji"]))
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
        opts = turn.options
        if turn.kind == "redeliver":
            return self.wa.redeliver(state.last_update or {})
        if turn.kind in ("text", "forward", "forged"):
            quoted = self._quoted_whatsapp(ident, state, opts["reply_to"]) if "reply_to" in opts else None
            if turn.kind == "forward":
                update = self.wa.forwarded(who, text or "")
            elif quoted is not None:
                update = self.wa.reply(who, text or "", quoted[0], quoted_from=quoted[1])
            else:
                update = self.wa.text(who, text or "")
            self._remember(state, _wamid(update), text or "")
            return update
        if turn.kind == "callback":
            message, button = self.bot_message("whatsapp", ident, state, turn=opts.get("turn"), data=text or "")
            if message is None:  # nothing offered it: the press names the latest message, as before
                return self.wa.interactive_reply(who, text or "", text or "", bot_message_id or "wamid.unknown")
            kind = (message.raw.get("interactive") or {}).get("type") if isinstance(message.raw, dict) else None
            if kind == "list":
                return self.wa.list_reply(who, button[0], button[1], message.message_id)
            return self.wa.interactive_reply(who, button[0], button[1], message.message_id)
        if turn.kind == "location":
            return self.wa.location(who, opts["latitude"], opts["longitude"], title=opts.get("title"),
                                    address=opts.get("address"))
        if turn.kind == "contact":
            return self.wa.contacts(who, str(opts["phone_number"]), str(opts["first_name"]), opts.get("last_name"))
        if turn.kind in ("audio", "voice"):
            return self.wa.audio(who, voice=turn.kind == "voice", mime_type=opts.get("mime_type"))
        if turn.kind == "reaction":
            target = self._reaction_target(ident, state, opts.get("to", "bot"), "whatsapp", bot_message_id)
            return self.wa.reaction(who, str(target or "wamid.unknown"), str(opts["emoji"]))
        caption = render(str(opts["caption"]), self.values_for(ident)) if opts.get("caption") else None
        if turn.kind == "document":
            return self.wa.document(who, opts["file_name"], opts["mime_type"])
        if turn.kind == "photo":
            return self.wa.image(who, caption=caption)
        if turn.kind == "sticker":
            return self.wa.sticker(who)
        raise ValueError(f"unknown turn kind {turn.kind!r} for whatsapp")

    # -- quoting and reacting -------------------------------------------------------------
    @staticmethod
    def _remember(state: CaseState, message_id: Any, text: str) -> None:
        """The user's message of the current turn (reply_to: N and reaction to: N find it)."""
        state.extra.setdefault("user_messages", {})[state.extra.get("index", -1)] = (message_id, text)

    def _quoted_telegram(self, ident: Identity, state: CaseState, target: Any) -> dict | None:
        if isinstance(target, int):
            found = state.extra.get("user_messages", {}).get(target)
            if found is None:
                return None
            return self.tg.earlier_message(ident.chat_id, int(found[0]), found[1], from_bot=False)
        message, _ = self.bot_message("telegram", ident, state,
                                      turn=target.get("bot") if isinstance(target, dict) else None)
        if message is None or not message.message_id.isdigit():
            return None
        quoted = self.tg.earlier_message(ident.chat_id, int(message.message_id), message.text, from_bot=True)
        if message.entities:
            quoted["entities"] = [dict(e) for e in message.entities]
        return quoted

    def _quoted_whatsapp(self, ident: Identity, state: CaseState, target: Any) -> tuple[str, str] | None:
        if isinstance(target, int):
            found = state.extra.get("user_messages", {}).get(target)
            return (str(found[0]), ident.wa_id) if found else None
        message, _ = self.bot_message("whatsapp", ident, state,
                                      turn=target.get("bot") if isinstance(target, dict) else None)
        return (message.message_id, self.wa.display_phone_number) if message is not None else None

    def _reaction_target(self, ident: Identity, state: CaseState, to: Any, channel: str, fallback: str) -> str:
        if isinstance(to, int):
            found = state.extra.get("user_messages", {}).get(to)
            return str(found[0]) if found else fallback
        message, _ = self.bot_message(channel, ident, state)
        return message.message_id if message is not None else fallback


def _wamid(update: dict) -> str:
    for entry in update.get("entry", []):
        for change in entry.get("changes", []):
            for msg in change.get("value", {}).get("messages", []):
                return str(msg.get("id", ""))
    return ""


def _options(reply: Reply) -> list[tuple[str, str]]:
    """(data or id, label) of each button a message offered (inline keyboard; WhatsApp buttons, list rows)."""
    raw = reply.raw if isinstance(reply.raw, dict) else {}
    if reply.channel == "telegram":
        markup = raw.get("reply_markup")
        rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
        return [(str(b.get("callback_data", "")), str(b.get("text", ""))) for row in rows or [] if isinstance(row, list)
                for b in row if isinstance(b, dict) and "callback_data" in b]
    return wa.offered_options(raw.get("interactive") or {}) if isinstance(raw.get("interactive"), dict) else []


__all__ = ["CaseState", "Delivery", "Driver", "Identity", "make_identity"]
