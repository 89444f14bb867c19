"""A pywa 4 bot on aiohttp: a test fixture, not harness code.

pywa's built-in routes need Starlette/FastAPI/Flask; pywa documents its three hooks for a
custom server (``webhook_challenge_handler``, ``webhook_update_validator``,
``webhook_update_handler``), mounted on aiohttp as pywa's Starlette glue does (pywa_aiohttp.py). It reads
WHATSAPP_API_BASE, WHATSAPP_PHONE_NUMBER_ID, WHATSAPP_TOKEN, WHATSAPP_APP_SECRET,
WHATSAPP_VERIFY_TOKEN and PORT.

- a text "menu" gets a list of BOT_ROWS rows (default 10: the Cloud API allows at most 10;
  11 is refused with error 131009), any other text "echo: <text>";
- a location, contacts, audio or voice note, reaction, forwarded text or reply is described back;
- a list or button reply gets "You chose <title> (<id>) from <context id>";
- every ``statuses`` webhook is counted per message id (pywa's on_message_status);
- GET /state/{wa_id}: {"verified": <handshakes answered>, "sent": [statuses per message, in
  send order], "messages": <messages sent>}.

    python tests/channels/bots/pywa_bot.py
"""

from __future__ import annotations

import logging
import os

import httpx
from aiohttp import web
from pywa_aiohttp import webhook_routes  # this folder's aiohttp glue (the script's folder is on sys.path)
from pywa_async import WhatsApp, filters, types

logging.getLogger("pywa").setLevel(logging.ERROR)
counts = {"verified": 0}
statuses: dict[str, list[str]] = {}
sent: list[str] = []


def make_wa() -> WhatsApp:
    wa = WhatsApp(phone_id=os.environ["WHATSAPP_PHONE_NUMBER_ID"], token=os.environ["WHATSAPP_TOKEN"],
                  verify_token=os.environ["WHATSAPP_VERIFY_TOKEN"], app_secret=os.environ["WHATSAPP_APP_SECRET"],
                  session=httpx.AsyncClient(), webhook_endpoint="/whatsapp")
    base = httpx.URL(os.environ["WHATSAPP_API_BASE"])  # pywa has no base-URL option: re-point its client
    wa.api._session.base_url = wa.api._session.base_url.copy_with(scheme=base.scheme, host=base.host, port=base.port)
    return wa


def make_app(wa: WhatsApp) -> web.Application:
    rows = int(os.environ.get("BOT_ROWS", "10"))

    @wa.on_message(filters.text)
    async def on_text(_: WhatsApp, msg: types.Message) -> None:
        if msg.forwarded:
            sent.append((await msg.reply(f"Forwarded: {msg.text}")).id)
            return
        if msg.reply_to_message is not None:
            sent.append((await msg.reply(f"You replied to {msg.reply_to_message.id}: {msg.text}")).id)
            return
        if msg.text.strip().lower() == "menu":
            section = types.Section(title="Days", rows=[
                types.SectionRow(title=f"Day {i + 1}", callback_data=f"day-{i + 1}") for i in range(rows)])
            sent_msg = await msg.reply("Pick a day", buttons=types.SectionList(button_title="Days",
                                                                              sections=[section]))
        else:
            sent_msg = await msg.reply(f"echo: {msg.text}")
        sent.append(sent_msg.id)

    @wa.on_message(filters.location)
    async def on_location(_: WhatsApp, msg: types.Message) -> None:
        sent.append((await msg.reply(f"Location {msg.location.latitude:.2f},{msg.location.longitude:.2f}")).id)

    @wa.on_message(filters.contacts)
    async def on_contacts(_: WhatsApp, msg: types.Message) -> None:
        card = msg.contacts[0]
        sent.append((await msg.reply(f"Contact {card.name.first_name} {card.phones[0].phone}")).id)

    @wa.on_message(filters.audio | filters.voice)
    async def on_audio(_: WhatsApp, msg: types.Message) -> None:
        sent.append((await msg.reply("Voice note" if msg.audio.voice else "Audio file")).id)

    @wa.on_message(filters.reaction)
    async def on_reaction(_: WhatsApp, msg: types.Message) -> None:
        sent.append((await msg.reply(f"Reaction {msg.reaction.emoji} on {msg.reaction.message_id}")).id)

    @wa.on_callback_selection()
    async def on_row(_: WhatsApp, sel: types.CallbackSelection) -> None:
        sent.append((await sel.reply(f"You chose {sel.title} ({sel.data}) from {sel.reply_to_message.id}")).id)

    @wa.on_callback_button()
    async def on_button(_: WhatsApp, btn: types.CallbackButton) -> None:
        sent.append((await btn.reply(f"You chose {btn.title} ({btn.data}) from {btn.reply_to_message.id}")).id)

    @wa.on_message_status()
    async def on_status(_: WhatsApp, status: types.MessageStatus) -> None:
        statuses.setdefault(status.id, []).append(status.status.value)

    def verified() -> None:
        counts["verified"] += 1

    async def state(request: web.Request) -> web.Response:
        return web.json_response({"verified": counts["verified"], "messages": len(sent),
                                  "sent": [statuses.get(m, []) for m in sent]})

    app = web.Application()
    app.add_routes(webhook_routes(wa, "/whatsapp", on_challenge=verified))
    app.router.add_get("/state/{wa_id}", state)
    return app


if __name__ == "__main__":
    web.run_app(make_app(make_wa()), host="127.0.0.1", port=int(os.environ["PORT"]), print=None)
