"""Success test: a real WhatsApp client library (pywa 4.5) accepts the harness's traffic.

pywa's built-in routes need Starlette/FastAPI/Flask, none of which the harness depends
on. pywa documents its three webhook hooks for "custom servers" instead
(``webhook_challenge_handler``, ``webhook_update_validator``, ``webhook_update_handler``);
the aiohttp glue (tests/channels/bots/pywa_aiohttp.py, shared with bots/pywa_bot.py) mirrors
``pywa._helpers.register_routes_starlette`` line for line, so signature checking, parsing, duplicate dropping and handler dispatch are all pywa's.
The one difference: the handler runs inline rather than as a background task, so the
test needn't poll.
"""

from __future__ import annotations

import logging

import aiohttp
import httpx
import pytest
from aiohttp import web
from pywa_async import WhatsApp, errors, filters, types

from harness.channels.whatsapp import (
    GraphApiEmulator,
    WhatsAppUpdates,
    deliver_payload,
    verify_webhook,
)
from harness.sandbox.server import listen
from harness.types import Event
from tests.channels.bots.pywa_aiohttp import webhook_routes

PNID, DISPLAY, WABA = "106540352242922", "15550783881", "102290129340398"
SECRET, VERIFY, TOKEN = "app-secret-123", "verify-me", "EAAG-test-token"
USER = "16505551234"


def pywa_webhook_app(wa: WhatsApp) -> web.Application:
    """pywa mounted on aiohttp through its documented custom-server hooks."""
    app = web.Application()
    app.add_routes(webhook_routes(wa, "/webhook"))
    return app


def point_at(wa: WhatsApp, base: httpx.URL | str) -> None:
    """Re-point pywa's Graph client at the emulator.

    pywa has no base-URL option: its GraphAPI writes https://graph.facebook.com/v<N>/ into
    the httpx client's base_url at construction, so the (private) client is re-pointed.
    """
    url = httpx.URL(str(base))
    wa.api._session.base_url = wa.api._session.base_url.copy_with(scheme=url.scheme, host=url.host, port=url.port)


@pytest.fixture
async def bot():
    """A pywa echo bot on loopback, replying through the Graph API emulator.

    Yields (webhook url, http session, texts the handler saw, emulator events).
    """
    logging.getLogger("pywa").setLevel(logging.CRITICAL)  # rejected updates log warnings by design
    events: list[Event] = []
    emu = GraphApiEmulator(PNID, TOKEN, events.append)
    emu.note_user(USER, WhatsAppUpdates(PNID, DISPLAY, WABA).bsuid_of(USER))
    graph = await listen(emu.app(), "whatsapp-graph")
    wa = WhatsApp(
        phone_id=PNID, token=TOKEN, verify_token=VERIFY, app_secret=SECRET,
        session=httpx.AsyncClient(), webhook_endpoint="/webhook",
    )
    point_at(wa, graph.base_url)
    seen: list[tuple[str, str, str | None]] = []

    @wa.on_message(filters.text)
    async def on_text(_: WhatsApp, msg: types.Message) -> None:
        seen.append((msg.text, msg.from_user.wa_id, msg.from_user.name))
        await msg.reply(f"echo: {msg.text}")

    srv = await listen(pywa_webhook_app(wa), "pywa-bot")
    async with aiohttp.ClientSession() as session:
        yield f"{srv.base_url}/webhook", session, seen, events
    await srv.stop()
    await graph.stop()
    await wa.api._session.aclose()


async def test_pywa_accepts_signed_delivery(bot):
    url, session, seen, events = bot
    updates = WhatsAppUpdates(PNID, DISPLAY, WABA)
    result = await deliver_payload(session, url, updates.text(USER, "caf\u00e9 au lait?", name="Ada"), SECRET, 2)
    assert result.status == 200, result
    assert seen == [("caf\u00e9 au lait?", USER, "Ada")]
    # The whole loop: pywa's reply goes out by business-scoped id and still reaches USER.
    (event,) = events
    assert event.request["recipient"] == updates.bsuid_of(USER) and "to" not in event.request
    assert (event.reply.chat, event.reply.text, event.keys) == (USER, "echo: caf\u00e9 au lait?", (f"wa:{USER}",))


async def test_pywa_drops_a_redelivery(bot):
    url, session, seen, events = bot
    updates = WhatsAppUpdates(PNID, DISPLAY, WABA)
    payload = updates.text(USER, "once")
    for _ in range(2):
        assert (await deliver_payload(session, url, updates.redeliver(payload), SECRET, 2)).status == 200
    assert seen == [("once", USER, "Test User")] and len(events) == 1


@pytest.mark.parametrize(
    "secret,status",
    [
        ("not-the-app-secret", 403),  # pywa answers a wrong signature with 403 ...
        (None, 401),  # ... and a missing one with 401
    ],
)
async def test_pywa_rejects_bad_signature(bot, secret, status):
    url, session, seen, events = bot
    result = await deliver_payload(session, url, WhatsAppUpdates(PNID, DISPLAY, WABA).text(USER, "x"), secret, 2)
    assert result.status == status and not result.ok
    assert seen == [] and events == []


@pytest.mark.parametrize("token,ok,status", [(VERIFY, True, 200), ("wrong", False, 403)])
async def test_pywa_verification_handshake(bot, token, ok, status):
    url, session, _, _ = bot
    result = await verify_webhook(session, url, token, timeout=2)
    assert (result.ok, result.status) == (ok, status), result


async def test_pywa_send_message_lands_in_emulator():
    """pywa's own send_message, mark-as-read and error mapping against the emulator."""
    events: list[Event] = []
    emu = GraphApiEmulator(PNID, TOKEN, events.append)
    srv = await listen(emu.app(), "whatsapp-graph")
    wa = WhatsApp(phone_id=PNID, token=TOKEN, session=httpx.AsyncClient())
    point_at(wa, srv.base_url)
    try:
        sent = await wa.send_message(to=USER, text="Your total is 42 EUR", buttons=[
            types.Button(title="Pay", callback_data="pay"), types.Button(title="Cancel", callback_data="no")])
        emu.note_inbound("wamid.inbound", USER)  # only messages the number received can be marked read
        await wa.mark_message_as_read("wamid.inbound")
        emu.fail_next(429, 130429, "(#130429) Rate limit hit")
        with pytest.raises(errors.RateLimitHit):  # pywa maps the Graph error code to its class
            await wa.send_message(to=USER, text="too fast")
        wrong = WhatsApp(phone_id=PNID, token="bad-token", session=httpx.AsyncClient())
        point_at(wrong, srv.base_url)
        with pytest.raises(errors.ExpiredAccessToken):  # code 190
            await wrong.send_message(to=USER, text="x")
        await wrong.api._session.aclose()
    finally:
        await wa.api._session.aclose()
        await srv.stop()
    send, read, limited, refused = events
    assert send.reply.message_id == sent.id and send.reply.text == "Your total is 42 EUR"
    assert send.reply.kind == "interactive" and send.reply.buttons == ("Pay", "Cancel")
    assert read.name == "whatsapp.mark_read" and read.response == {"success": True}
    assert limited.status == 429 and limited.reply is None
    assert refused.status == 401 and refused.reply is None
