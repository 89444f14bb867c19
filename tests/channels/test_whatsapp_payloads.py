"""WhatsApp webhook payloads, signing, delivery and the verification handshake."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json

import aiohttp
import pytest
from aiohttp import web

from harness.channels.whatsapp import (
    WhatsAppUpdates,
    deliver_payload,
    encode_payload,
    sign,
    verify_webhook,
)
from harness.sandbox.server import listen

PNID, DISPLAY, WABA = "106540352242922", "15550783881", "102290129340398"
USER = "16505551234"


def updates(**kw) -> WhatsAppUpdates:
    return WhatsAppUpdates(PNID, DISPLAY, WABA, clock=lambda: 1_700_000_000.9, **kw)


def value_of(payload: dict) -> dict:
    return payload["entry"][0]["changes"][0]["value"]


# -- payload shapes --------------------------------------------------------------------

BUILDERS = {
    "text": lambda u: u.text(USER, "hello", name="Ada"),
    "image": lambda u: u.image(USER, caption="look"),
    "image-no-caption": lambda u: u.image(USER),
    "sticker": lambda u: u.sticker(USER),
    "document": lambda u: u.document(USER, "report.pdf", "application/pdf"),
    "button": lambda u: u.interactive_reply(USER, "yes-1", "Yes", "wamid.ctx"),
}

#: (builder, message type, path into the message, expected value)
MESSAGE_FIELDS = [
    ("text", "text", ("text", "body"), "hello"),
    ("image", "image", ("image", "caption"), "look"),
    ("image", "image", ("image", "mime_type"), "image/jpeg"),
    ("sticker", "sticker", ("sticker", "mime_type"), "image/webp"),
    ("document", "document", ("document", "filename"), "report.pdf"),
    ("document", "document", ("document", "mime_type"), "application/pdf"),
    ("button", "interactive", ("interactive", "type"), "button_reply"),
    ("button", "interactive", ("interactive", "button_reply", "id"), "yes-1"),
    ("button", "interactive", ("interactive", "button_reply", "title"), "Yes"),
    ("button", "interactive", ("context", "id"), "wamid.ctx"),
    ("button", "interactive", ("context", "from"), DISPLAY),
]


@pytest.mark.parametrize("builder", sorted(BUILDERS))
def test_message_envelope(builder):
    payload = BUILDERS[builder](updates())
    assert payload["object"] == "whatsapp_business_account"
    entry = payload["entry"][0]
    assert entry["id"] == WABA
    assert entry["changes"][0]["field"] == "messages"
    value = entry["changes"][0]["value"]
    assert value["messaging_product"] == "whatsapp"
    assert value["metadata"] == {"display_phone_number": DISPLAY, "phone_number_id": PNID}
    (contact,) = value["contacts"]
    assert contact["wa_id"] == USER and "name" in contact["profile"]
    (message,) = value["messages"]
    assert message["from"] == USER
    assert message["id"].startswith("wamid.") and len(message["id"]) > 20
    # A string of whole unix seconds, never a number.
    assert message["timestamp"] == "1700000000"
    json.dumps(payload)  # plain JSON data only


@pytest.mark.parametrize("builder,type_,path,expected", MESSAGE_FIELDS)
def test_message_fields(builder, type_, path, expected):
    message = value_of(BUILDERS[builder](updates()))["messages"][0]
    assert message["type"] == type_
    node = message
    for key in path:
        node = node[key]
    assert node == expected


def test_caption_absent_when_none():
    assert "caption" not in value_of(updates().image(USER))["messages"][0]["image"]


def test_ids_unique():
    u = updates()
    ids = {value_of(u.text(USER, "x"))["messages"][0]["id"] for _ in range(200)}
    assert len(ids) == 200


@pytest.mark.parametrize("bsuid", [True, False])
def test_business_scoped_user_id(bsuid):
    u = updates(bsuid=bsuid)
    value = value_of(u.text(USER, "hi"))
    if bsuid:
        assert value["contacts"][0]["user_id"] == value["messages"][0]["from_user_id"] == u.bsuid_of(USER)
        assert u.bsuid_of(USER).startswith("US.") and u.bsuid_of(USER) != u.bsuid_of("16505550000")
    else:
        assert "user_id" not in value["contacts"][0] and "from_user_id" not in value["messages"][0]


@pytest.mark.parametrize(
    "status,errors,expect_errors",
    [
        ("sent", None, False),
        ("delivered", None, False),
        ("read", None, False),
        ("failed", None, True),
        ("failed", [{"code": 131047, "title": "Re-engagement message"}], True),
    ],
)
def test_status_payload(status, errors, expect_errors):
    value = value_of(updates().status(USER, "wamid.abc", status, errors))
    (item,) = value["statuses"]
    assert (item["id"], item["status"], item["recipient_id"]) == ("wamid.abc", status, USER)
    assert item["timestamp"] == "1700000000"
    assert ("errors" in item) is expect_errors
    if errors:
        assert item["errors"] == errors
    elif expect_errors:
        assert item["errors"][0]["code"] == 131026


@pytest.mark.parametrize("bad", ["queued", "", "READ"])
def test_status_rejects_unknown_status(bad):
    with pytest.raises(ValueError):
        updates().status(USER, "wamid.abc", bad)


def test_redeliver_is_byte_identical():
    u = updates()
    payload = u.text(USER, "same")
    assert encode_payload(u.redeliver(payload)) == encode_payload(payload)


# -- signing ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "body,secret",
    [
        (b"", "s"),
        (b'{"a":1}', "app-secret"),
        ('{"t":"h\\u00e9"}'.encode(), "\u00e9t\u00e9"),  # non-ASCII secret is UTF-8 keyed
    ],
)
def test_sign_known_answer(body, secret):
    expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    assert sign(body, secret) == "sha256=" + expected


@pytest.mark.parametrize(
    "body,secret,other_body,other_secret",
    [
        (b'{"a":1}', "right", b'{"a":1}', "wrong"),
        (b'{"a":1}', "right", b'{"a": 1}', "right"),  # one space changes the signature
    ],
)
def test_sign_mismatch(body, secret, other_body, other_secret):
    assert sign(body, secret) != sign(other_body, other_secret)


def test_encoding_escapes_non_ascii_like_meta():
    body = encode_payload(updates().text(USER, "caf\u00e9 \U0001f600"))
    assert body.isascii() and b"\\u00e9" in body
    assert value_of(json.loads(body))["messages"][0]["text"]["body"] == "caf\u00e9 \U0001f600"


# -- delivery and verification against a recording server ------------------------------

@pytest.fixture
async def webhook():
    """A webhook that records raw requests and answers like a minimal agent."""
    seen: list[tuple[bytes, dict]] = []

    async def post(request: web.Request) -> web.Response:
        seen.append((await request.read(), dict(request.headers)))
        return web.Response(text="EVENT_RECEIVED")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.5)
        return web.Response(text="late")

    async def get(request: web.Request) -> web.Response:
        if request.query.get("hub.mode") == "subscribe" and request.query.get("hub.verify_token") == "vt":
            return web.Response(text=request.query["hub.challenge"])
        return web.Response(status=403, text="Forbidden")

    async def constant(request: web.Request) -> web.Response:
        return web.Response(text="1158201444")

    app = web.Application()
    app.router.add_post("/hook", post)
    app.router.add_post("/slow", slow)
    app.router.add_get("/hook", get)
    app.router.add_get("/constant", constant)
    srv = await listen(app, "test-webhook")
    async with aiohttp.ClientSession() as session:
        yield srv.base_url, session, seen
    await srv.stop()


async def test_deliver_signs_the_bytes_it_sends(webhook):
    base, session, seen = webhook
    payload = updates().text(USER, "h\u00e9llo")
    result = await deliver_payload(session, base + "/hook", payload, "s3cret", timeout=2)
    assert (result.status, result.error, result.body, result.ok) == (200, "", "EVENT_RECEIVED", True)
    raw, headers = seen[0]
    assert headers["Content-Type"] == "application/json"
    expected = hmac.new(b"s3cret", raw, hashlib.sha256).hexdigest()
    assert headers["X-Hub-Signature-256"] == "sha256=" + expected
    assert json.loads(raw) == payload


async def test_deliver_unsigned_without_secret(webhook):
    base, session, seen = webhook
    await deliver_payload(session, base + "/hook", updates().sticker(USER), None, timeout=2)
    assert "X-Hub-Signature-256" not in seen[0][1]


@pytest.mark.parametrize(
    "path,timeout,fragment",
    [
        ("/slow", 0.2, "within 0.2s"),
        (None, 1, "ClientConnectorError"),  # nothing listens there
    ],
)
async def test_deliver_failures_are_results_not_exceptions(webhook, path, timeout, fragment):
    base, session, _ = webhook
    url = base + path if path else "http://127.0.0.1:9/hook"
    result = await deliver_payload(session, url, updates().text(USER, "x"), "s", timeout=timeout)
    assert result.status is None and fragment in result.error and not result.ok


@pytest.mark.parametrize(
    "path,token,ok,status",
    [
        ("/hook", "vt", True, 200),
        ("/hook", "wrong", False, 403),
        ("/constant", "vt", False, 200),  # answers a fixed value instead of the challenge
    ],
)
async def test_verify_webhook(webhook, path, token, ok, status):
    base, session, _ = webhook
    result = await verify_webhook(session, base + path, token, timeout=2)
    assert (result.ok, result.status) == (ok, status)
    assert result.challenge.isdigit()
    assert (result.error == "") is ok


async def test_verify_webhook_unreachable():
    async with aiohttp.ClientSession() as session:
        result = await verify_webhook(session, "http://127.0.0.1:9/hook", "vt", timeout=1)
    assert not result.ok and result.status is None and result.error
