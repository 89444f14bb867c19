"""Round trips: every update and webhook the harness builds parses in the real client libraries.

Telegram updates go through python-telegram-bot 22 (``Update.de_json``) and aiogram 3
(``Update.model_validate``, pydantic, strict about required fields); WhatsApp webhooks go
through pywa's own update handler and reach the handler a bot author would register.
"""

from __future__ import annotations

import json

import pytest

from harness.channels.telegram_updates import TelegramUpdates
from harness.channels.whatsapp_payloads import WhatsAppUpdates

telegram = pytest.importorskip("telegram")
aiogram_types = pytest.importorskip("aiogram.types")
pywa_async = pytest.importorskip("pywa_async")

CHAT = 700000123
B = TelegramUpdates(clock=lambda: 1_750_000_000)


def _reply_update():
    first = B.text(CHAT, "summarize this")
    update = B.text(CHAT, "and this?")
    quoted = B.earlier_message(CHAT, first["message"]["message_id"], "summarize this", from_bot=False)
    return B.reply_to(update, quoted)


TELEGRAM_UPDATES = {
    "text": (lambda: B.text(CHAT, "/start go to https://example.com 😀"),
             lambda u: (u.message.text.startswith("/start"), u.message.entities[0].type == "bot_command")),
    "location": (lambda: B.location(CHAT, 52.52, 13.405, title="Office", address="Main St 1"),
                 lambda u: (u.message.location.latitude == 52.52, u.message.venue.title == "Office")),
    "contact": (lambda: B.contact(CHAT, "+4930123456", "Ada", "Lovelace"),
                lambda u: (u.message.contact.first_name == "Ada", u.message.contact.phone_number == "+4930123456")),
    "voice": (lambda: B.audio(CHAT, voice=True, duration=3), lambda u: (u.message.voice.duration == 3,)),
    "audio": (lambda: B.audio(CHAT, duration=90, caption="listen"),
              lambda u: (u.message.audio.duration == 90, u.message.caption == "listen")),
    "reaction": (lambda: B.reaction(CHAT, 7, "👍"),
                 lambda u: (u.message_reaction.new_reaction[0].emoji == "👍", u.message_reaction.message_id == 7)),
    "forwarded": (lambda: B.forwarded(CHAT, "meeting moved", sender_name="Bob"),
                  lambda u: (u.message.forward_origin.sender_user_name == "Bob", u.message.text == "meeting moved")),
    "forwarded from a user": (lambda: B.forwarded(CHAT, "hi", sender_name="Bob", sender_id=42),
                              lambda u: (u.message.forward_origin.sender_user.id == 42,)),
    "reply": (_reply_update, lambda u: (u.message.reply_to_message.text == "summarize this",)),
    "edited": (lambda: B.edited(CHAT, 3, "fixed"), lambda u: (u.edited_message.text == "fixed",
                                                              u.edited_message.edit_date is not None)),
    "callback": (lambda: B.callback(CHAT, "yes", 5, message_text="Continue?"),
                 lambda u: (u.callback_query.data == "yes", u.callback_query.message.message_id == 5)),
    "document": (lambda: B.document(CHAT, "paper.pdf", "application/pdf", caption="read"),
                 lambda u: (u.message.document.file_name == "paper.pdf",)),
    "photo": (lambda: B.photo(CHAT, caption="look"), lambda u: (len(u.message.photo) == 3,)),
    "sticker": (lambda: B.sticker(CHAT), lambda u: (u.message.sticker.emoji == "😀",)),
}


@pytest.mark.parametrize("name", list(TELEGRAM_UPDATES))
def test_python_telegram_bot_parses(name):
    build, expect = TELEGRAM_UPDATES[name]
    raw = json.loads(json.dumps(build()))  # as it goes on the wire
    bot = telegram.Bot("123:abc")
    update = telegram.Update.de_json(raw, bot)
    assert update.update_id == raw["update_id"]
    assert all(expect(update)), name
    # nothing the builder sent was left over as unknown (api_kwargs holds fields PTB does not know)
    for part in (update.message, update.edited_message, update.callback_query, update.message_reaction):
        if part is not None:
            assert not part.api_kwargs, (name, part.api_kwargs)


@pytest.mark.parametrize("name", list(TELEGRAM_UPDATES))
def test_aiogram_parses(name):
    build, expect = TELEGRAM_UPDATES[name]
    raw = json.loads(json.dumps(build()))
    update = aiogram_types.Update.model_validate(raw, context={})
    assert update.update_id == raw["update_id"]
    assert all(expect(update)), name


W = WhatsAppUpdates("106540352242922", "15550783881", "102290129340398", clock=lambda: 1_750_000_000)
USER = "4470000000123"

WHATSAPP_PAYLOADS = {
    "text": (lambda: W.text(USER, "hello"), "message", lambda m: m.text == "hello"),
    "location": (lambda: W.location(USER, 52.52, 13.405, title="Office", address="Main St 1"), "message",
                 lambda m: m.location.latitude == 52.52 and m.location.name == "Office"),
    "contacts": (lambda: W.contacts(USER, "+4930123456", "Ada", "Lovelace"), "message",
                 lambda m: m.contacts[0].name.first_name == "Ada" and m.contacts[0].phones[0].phone == "+4930123456"),
    "voice": (lambda: W.audio(USER, voice=True), "message", lambda m: m.audio.voice is True),
    "audio": (lambda: W.audio(USER), "message", lambda m: m.audio.voice is False),
    "reaction": (lambda: W.reaction(USER, "wamid.abc", "🎉"), "message",
                 lambda m: m.reaction.emoji == "🎉" and m.reaction.message_id == "wamid.abc"),
    "forwarded": (lambda: W.forwarded(USER, "fwd", frequently=True), "message",
                  lambda m: m.forwarded and m.forwarded_many_times),
    "reply": (lambda: W.reply(USER, "this", "wamid.q"), "message",
              lambda m: m.reply_to_message.id == "wamid.q"),
    "button": (lambda: W.interactive_reply(USER, "b1", "Yes", "wamid.k"), "button",
               lambda b: b.data == "b1" and b.title == "Yes" and b.reply_to_message.id == "wamid.k"),
    "list row": (lambda: W.list_reply(USER, "day-3", "Day 3", "wamid.l", description="Wed"), "selection",
                 lambda s: s.data == "day-3" and s.title == "Day 3" and s.reply_to_message.id == "wamid.l"),
    "document": (lambda: W.document(USER, "paper.pdf", "application/pdf"), "message",
                 lambda m: m.document.filename == "paper.pdf"),
    "image": (lambda: W.image(USER, caption="look"), "message", lambda m: m.caption == "look"),
    "status sent": (lambda: W.status(USER, "wamid.s", "sent"), "status", lambda s: s.status.value == "sent"),
    "status delivered": (lambda: W.status(USER, "wamid.s", "delivered"), "status",
                         lambda s: s.status.value == "delivered"),
    "status read": (lambda: W.status(USER, "wamid.s", "read"), "status", lambda s: s.status.value == "read"),
    "status failed": (lambda: W.status(USER, "wamid.s", "failed"), "status",
                      lambda s: s.status.value == "failed" and s.error.code == 131026),
}


@pytest.mark.parametrize("name", list(WHATSAPP_PAYLOADS))
async def test_pywa_parses(name):
    from pywa_async import WhatsApp

    build, kind, expect = WHATSAPP_PAYLOADS[name]
    wa = WhatsApp(phone_id="106540352242922", token="t", server=None, verify_token="v", validate_updates=False)
    seen: list = []

    def collect(kind: str):
        async def handler(_, update):
            seen.append((kind, update))
        return handler

    wa.on_message()(collect("message"))
    wa.on_callback_button()(collect("button"))
    wa.on_callback_selection()(collect("selection"))
    wa.on_message_status()(collect("status"))

    await wa.webhook_update_handler(json.dumps(build()).encode())
    assert [k for k, _ in seen] == [kind], (name, seen)
    assert expect(seen[0][1]), name
