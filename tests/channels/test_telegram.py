"""Update builders, webhook delivery and webhook-answer events of the Telegram channel."""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest
from aiohttp import web

from harness.channels.telegram import (
    SECRET_HEADER,
    MessageIds,
    TelegramUpdates,
    callback_chat,
    deliver_update,
    text_entities,
    utf16_len,
    webhook_reply_event,
)
from harness.sandbox.server import listen

CHAT = 4242


def _ents(*triples):
    return [{"offset": o, "length": n, "type": t} for t, o, n in triples]


# -- entities -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("/start", _ents(("bot_command", 0, 6))),
        ("/start@harness_test_bot hi", _ents(("bot_command", 0, 23))),
        ("/help me", _ents(("bot_command", 0, 5))),
        ("see example.com/x.pdf.", _ents(("url", 4, 17))),
        ("htps://example.com/a", _ents(("url", 0, 20))),
        ("go to https://a.io/b, now", _ents(("url", 6, 14))),
        ("😀 https://a.io", _ents(("url", 3, 12))),  # one astral char shifts by 2
        ("😀😀 https://a.io", _ents(("url", 5, 12))),
        ("é https://a.io", _ents(("url", 2, 12))),  # BMP accents count 1
        ("http://127.0.0.1:8080/c/abcdefgh12/d.pdf", _ents(("url", 0, 40))),
        ("/sum https://x.org/a", _ents(("bot_command", 0, 4), ("url", 5, 15))),
        ("(https://en.wikipedia.org/wiki/A_(b))", _ents(("url", 1, 35))),
        # commands as tdlib's match_bot_commands marks them: ended by any non-word character
        ("/book!!", _ents(("bot_command", 0, 5))),
        ("/reset...", _ents(("bot_command", 0, 6))),
        ("/book@harness_test_bot, tomorrow", _ents(("bot_command", 0, 22))),
        ("hi /start", _ents(("bot_command", 3, 6))),  # at any word start, not only offset 0
        ("😀 /help", _ents(("bot_command", 3, 5))),
        ("/a_1", _ents(("bot_command", 0, 4))),
        # must NOT produce entities
        ("", []),
        ("/", []),
        ("/ start", []),
        ("and/or", []),  # inside a word
        ("/usr/bin", []),  # followed by "/"
        ("//start", []),
        ("<b>/start</b>", []),  # after ">" and before "<"
        ("/start@ab", []),  # a username under 3 characters: no command at all
        ("/starté", []),  # a word character after it
        ("/" + "a" * 65, []),  # over 64 characters
        ("report.pdf is attached", []),
        ("e.g. this", []),
        ("version 1.2.3", []),
        ("mail bob@example.com", []),
        ("http://", []),
    ],
)
def test_text_entities(text, expected):
    assert text_entities(text) == expected


@pytest.mark.parametrize("text, units", [("", 0), ("abc", 3), ("😀", 2), ("a😀b", 4), ("ü", 1)])
def test_utf16_len(text, units):
    assert utf16_len(text) == units


# -- builders -----------------------------------------------------------------------
def _builder(**kw):
    return TelegramUpdates(100, clock=lambda: 1_700_000_000.5, **kw)


def test_text_update_shape():
    up = _builder().text(CHAT, "/start")
    msg = up["message"]
    assert up["update_id"] == 100
    assert msg["message_id"] == 1 and msg["date"] == 1_700_000_000
    assert msg["chat"] == {"id": CHAT, "type": "private", "first_name": "Tester"}
    assert msg["from"]["id"] == CHAT and msg["from"]["is_bot"] is False
    assert msg["from"]["language_code"] == "en" and msg["from"]["username"]
    assert msg["entities"] == _ents(("bot_command", 0, 6))


@pytest.mark.parametrize("text", ["", "plain words", "and/or"])
def test_text_without_entities_omits_the_key(text):
    msg = _builder().text(CHAT, text)["message"]
    assert msg["text"] == text and "entities" not in msg


def test_ids_increase_per_update_and_per_chat():
    b = _builder()
    ups = [b.text(CHAT, "a"), b.text(CHAT, "b"), b.text(7, "c"), b.document(CHAT, "f.pdf", "application/pdf")]
    assert [u["update_id"] for u in ups] == [100, 101, 102, 103]
    assert [u["message"]["message_id"] for u in ups] == [1, 2, 1, 3]


def test_explicit_message_id_and_user():
    b = _builder()
    user = {"id": 9, "is_bot": False, "first_name": "X"}
    up = b.text(CHAT, "hi", user=user, message_id=50)
    assert up["message"]["message_id"] == 50 and up["message"]["from"] == user
    assert b.text(CHAT, "next")["message"]["message_id"] == 51  # never reused
    assert b.user_for(CHAT)["id"] == CHAT


def test_document_and_photo():
    b = _builder()
    doc = b.document(CHAT, "r.pdf", "application/pdf", file_size=99, caption="see example.com")
    d = doc["message"]["document"]
    assert d["file_name"] == "r.pdf" and d["mime_type"] == "application/pdf" and d["file_size"] == 99
    assert d["file_id"] and d["file_unique_id"] and d["file_id"] != d["file_unique_id"]
    assert doc["message"]["caption"] == "see example.com"
    assert doc["message"]["caption_entities"] == _ents(("url", 4, 11))
    photo = b.photo(CHAT)["message"]
    assert "caption" not in photo
    assert [p["width"] for p in photo["photo"]] == sorted(p["width"] for p in photo["photo"])
    assert all({"file_id", "file_unique_id", "width", "height"} <= p.keys() for p in photo["photo"])


def test_sticker_has_required_fields():
    s = _builder().sticker(CHAT, emoji="🐱")["message"]["sticker"]
    assert {"file_id", "file_unique_id", "type", "width", "height", "is_animated", "is_video"} <= s.keys()
    assert s["type"] == "regular" and s["is_animated"] is False and s["is_video"] is False
    assert s["emoji"] == "🐱"


def test_edited_keeps_date_and_adds_edit_date():
    times = iter([1000.0, 2000.0])
    b = TelegramUpdates(clock=lambda: next(times))
    orig = b.text(CHAT, "helo")["message"]
    up = b.edited(CHAT, orig["message_id"], "hello https://a.io")
    e = up["edited_message"]
    assert "message" not in up
    assert e["message_id"] == orig["message_id"] and e["date"] == 1000 and e["edit_date"] == 2000
    assert e["entities"] == _ents(("url", 6, 12))


def test_callback_query_shape_and_chat_in_id():
    ids = MessageIds()
    b = TelegramUpdates(message_ids=ids)
    ids.next(CHAT)  # a bot message the emulator sent
    q = b.callback(CHAT, "yes", 1)["callback_query"]
    assert q["data"] == "yes" and q["from"]["id"] == CHAT and q["chat_instance"]
    assert q["message"]["message_id"] == 1 and q["message"]["from"]["is_bot"] is True
    assert q["message"]["chat"]["id"] == CHAT
    assert callback_chat(q["id"]) == CHAT
    assert b.text(CHAT, "x")["message"]["message_id"] == 2  # shared per-chat sequence


@pytest.mark.parametrize("qid, chat", [("1004242-4242", 4242), ("1-−5", None), ("abc", None), ("", None), ("7--100123", -100123)])
def test_callback_chat(qid, chat):
    assert callback_chat(qid) == chat


def test_redeliver_is_an_equal_copy():
    b = _builder()
    up = b.text(CHAT, "hi")
    again = b.redeliver(up)
    assert again == up and again is not up and again["message"] is not up["message"]


# -- delivery ---------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
async def webhook():
    """A stand-in agent webhook whose answer each test sets; records what it received."""
    seen: list[dict] = []
    answer: dict = {"status": 200, "body": "", "delay": 0.0}

    async def handle(request: web.Request) -> web.Response:
        seen.append({"headers": dict(request.headers), "json": await request.json()})
        await asyncio.sleep(answer["delay"])
        return web.Response(status=answer["status"], text=answer["body"], content_type="application/json")

    app = web.Application()
    app.router.add_post("/hook", handle)
    srv = await listen(app, "fake-agent")
    async with aiohttp.ClientSession() as session:
        yield session, f"{srv.base_url}/hook", seen, answer
    await srv.stop()


async def test_deliver_sends_json_and_secret(webhook):
    session, url, seen, _ = webhook
    up = TelegramUpdates().text(CHAT, "héllo 😀")
    res = await deliver_update(session, url, up, "s3cret", 2)
    assert res.status == 200 and res.ok and res.error == "" and res.webhook_reply is None
    assert seen[0]["headers"]["Content-Type"] == "application/json"
    assert seen[0]["headers"][SECRET_HEADER] == "s3cret"
    assert seen[0]["json"] == up
    await deliver_update(session, url, up, None, 2)
    assert SECRET_HEADER not in seen[1]["headers"]


@pytest.mark.parametrize(
    "status, body, expected",
    [
        (200, '{"method": "sendMessage", "chat_id": 1, "text": "hi"}', {"method": "sendMessage", "chat_id": 1, "text": "hi"}),
        (200, "", None),
        (200, '{"ok": true}', None),
        (200, '{"method": ""}', None),
        (200, "not json {\"method\"", None),
        (200, '["method"]', None),
        (500, '{"method": "sendMessage", "chat_id": 1, "text": "hi"}', None),  # Telegram ignores it
    ],
)
async def test_deliver_webhook_reply(webhook, status, body, expected):
    session, url, _, answer = webhook
    answer.update(status=status, body=body)
    res = await deliver_update(session, url, {"update_id": 1}, None, 2)
    assert res.status == status and res.webhook_reply == expected and res.body == body


async def test_deliver_failures_never_raise(webhook):
    session, url, _, answer = webhook
    answer["delay"] = 0.5
    slow = await deliver_update(session, url, {"update_id": 1}, None, 0.2)
    assert slow.status is None and "within 0.2s" in slow.error and not slow.ok
    refused = await deliver_update(session, f"http://127.0.0.1:{_free_port()}/x", {"update_id": 1}, None, 1)
    assert refused.status is None and refused.error


# -- webhook answers as events --------------------------------------------------------------
def test_webhook_reply_event_for_send_message():
    body = {
        "method": "sendmessage",
        "chat_id": CHAT,
        "text": "read http://127.0.0.1:1/c/abcdefgh12/doc.pdf",
        "reply_markup": '{"inline_keyboard": [[{"text": "Yes", "callback_data": "y"}]]}',
    }
    ev = webhook_reply_event(body, 12.5)
    assert ev.source == "telegram" and ev.name == "telegram.sendMessage" and ev.status == 200
    assert ev.keys == (f"tg:{CHAT}", "tok:abcdefgh12")
    assert ev.reply.method == "webhook-response" and ev.reply.kind == "text"
    assert ev.reply.chat == str(CHAT) and ev.reply.at == 12.5 and ev.reply.buttons == ("Yes",)
    assert "method" not in ev.request


@pytest.mark.parametrize(
    "body, status, error",
    [
        ({"method": "sendMessage", "chat_id": 1, "text": ""}, 400, "Bad Request: message text is empty"),
        ({"method": "sendMessage", "text": "hi"}, 400, "Bad Request: chat_id is empty"),
        ({"method": "sendMessage", "chat_id": 1, "text": "x" * 4097}, 400, "Bad Request: message is too long"),
        ({"method": "frobnicate", "chat_id": 1}, 404, "Not Found"),
    ],
)
def test_webhook_reply_event_invalid_calls_have_no_reply(body, status, error):
    ev = webhook_reply_event(body, 1.0)
    assert (ev.status, ev.error, ev.reply) == (status, error, None)


def test_webhook_reply_event_non_reply_method():
    ev = webhook_reply_event({"method": "sendChatAction", "chat_id": 5, "action": "typing"}, 1.0)
    assert ev.name == "telegram.sendChatAction" and ev.status == 200 and ev.reply is None
    assert ev.keys == ("tg:5",)
