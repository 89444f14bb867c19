"""The Bot API emulator: answers like Telegram for good and bad calls, records every call."""

from __future__ import annotations

import json

import aiohttp
import pytest

from harness.channels.telegram import BotApiEmulator
from harness.sandbox.server import listen

TOKEN = "123456:ABC-def_ghi"
CHAT = 777


@pytest.fixture
async def emu():
    events: list = []
    em = BotApiEmulator(TOKEN, events.append, clock=lambda: 1_700_000_000.25)
    srv = await listen(em.app(), "telegram")
    async with aiohttp.ClientSession() as session:

        async def call(method, body=None, *, how="json", token=TOKEN, http="POST"):
            url = f"{srv.base_url}/bot{token}/{method}"
            if http == "GET":
                kw = {"params": body or {}}
            elif how == "json":
                kw = {"json": body or {}}
            elif how == "form":
                kw = {"data": {k: v if isinstance(v, str) else json.dumps(v) for k, v in (body or {}).items()}}
            else:
                kw = {"data": body}
            async with session.request(http, url, **kw) as resp:
                return resp.status, await resp.json()

        yield em, events, call, srv.base_url
    await srv.stop()


# -- good and bad calls -------------------------------------------------------------------
@pytest.mark.parametrize(
    "method, body, status, description",
    [
        ("sendMessage", {"chat_id": CHAT, "text": ""}, 400, "Bad Request: message text is empty"),
        ("sendMessage", {"chat_id": CHAT, "text": "  \n "}, 400, "Bad Request: message text is empty"),
        ("sendMessage", {"chat_id": CHAT}, 400, "Bad Request: message text is empty"),
        ("sendMessage", {"chat_id": CHAT, "text": "x" * 4097}, 400, "Bad Request: message is too long"),
        ("sendMessage", {"text": "hi"}, 400, "Bad Request: chat_id is empty"),
        ("sendMessage", {"chat_id": "@nobody", "text": "hi"}, 400, "Bad Request: chat not found"),
        ("sendMessage", {"chat_id": CHAT, "text": "hi", "parse_mode": "BBCode"}, 400, "Bad Request: unsupported parse_mode"),
        ("sendMessage", {"chat_id": CHAT, "text": "hi", "reply_markup": "{oops"}, 400, "Bad Request: can't parse reply keyboard markup JSON object"),
        ("sendDocument", {"chat_id": CHAT}, 400, "Bad Request: there is no document in the request"),
        ("sendPhoto", {"chat_id": CHAT, "photo": "x", "caption": "c" * 1025}, 400, "Bad Request: message caption is too long"),
        ("sendChatAction", {"chat_id": CHAT, "action": "dancing"}, 400, "Bad Request: wrong parameter action in request"),
        ("editMessageText", {"chat_id": CHAT, "message_id": 99, "text": "new"}, 400, "Bad Request: message to edit not found"),
        ("editMessageText", {"chat_id": CHAT, "text": "new"}, 400, "Bad Request: message identifier is not specified"),
        ("deleteMessage", {"chat_id": CHAT, "message_id": 99}, 400, "Bad Request: message to delete not found"),
        ("answerCallbackQuery", {}, 400, "Bad Request: query is too old and response timeout expired or query ID is invalid"),
        ("setWebhook", {"url": "http://x/y", "secret_token": "bad token!"}, 400, "Bad Request: secret token contains unallowed characters"),
        ("frobnicate", {}, 404, "Not Found"),
    ],
)
async def test_bad_calls(emu, method, body, status, description):
    _, events, call, _ = emu
    for how in ("json", "form"):
        got_status, got = await call(method, body, how=how)
        assert got_status == status
        assert got == {"ok": False, "error_code": status, "description": description}
    assert [e.status for e in events] == [status, status]
    assert all(e.reply is None and e.error == description for e in events)


async def test_wrong_token_is_401_and_token_never_recorded(emu):
    _, events, call, _ = emu
    status, body = await call("getMe", token="123456:WRONG")
    assert status == 401 and body == {"ok": False, "error_code": 401, "description": "Unauthorized"}
    assert events[0].name == "telegram.getMe" and events[0].status == 401
    assert TOKEN not in repr(events[0]) and "WRONG" not in repr(events[0])


async def test_paths_outside_the_api_are_404(emu):
    _, _, _, base = emu
    async with aiohttp.ClientSession() as s:
        for path in ("/", "/bot", f"/bot{TOKEN}", f"/file/bot{TOKEN}/x/y"):
            async with s.get(base + path) as resp:
                assert resp.status == 404 and (await resp.json())["description"] == "Not Found"


@pytest.mark.parametrize("spelling", ["sendMessage", "sendmessage", "SENDMESSAGE", "SendMessage"])
async def test_method_names_are_case_insensitive(emu, spelling):
    _, events, call, _ = emu
    status, body = await call(spelling, {"chat_id": CHAT, "text": "hi"})
    assert status == 200 and body["ok"] is True
    assert events[0].name == "telegram.sendMessage" and events[0].reply.method == "sendMessage"


@pytest.mark.parametrize("how", ["json", "form", "GET"])
async def test_send_message_answers_a_message_and_records_a_reply(emu, how):
    em, events, call, _ = emu
    markup = {"inline_keyboard": [[{"text": "Yes", "callback_data": "y"}, {"text": "No", "callback_data": "n"}]]}
    params = {"chat_id": CHAT, "text": "pick http://127.0.0.1:9/c/abcdefgh12/x", "reply_markup": markup}
    if how == "GET":
        params = {**params, "chat_id": str(CHAT), "reply_markup": json.dumps(markup)}
        status, body = await call("sendMessage", params, http="GET")
    else:
        status, body = await call("sendMessage", params, how=how)
    assert status == 200
    msg = body["result"]
    assert msg["message_id"] == 1 and msg["date"] == 1_700_000_000
    assert msg["chat"] == {"id": CHAT, "type": "private", "first_name": "Tester"}
    assert msg["from"]["is_bot"] is True and msg["from"]["id"] == 123456
    assert msg["text"] == params["text"] and msg["reply_markup"] == markup
    (ev,) = events
    assert ev.source == "telegram" and ev.status == 200 and ev.at == 1_700_000_000.25
    assert ev.keys == (f"tg:{CHAT}", "tok:abcdefgh12")
    assert ev.request["chat_id"] == CHAT  # forms' strings normalized to the JSON shape
    assert ev.response == body and ev.duration_ms >= 0
    r = ev.reply
    assert (r.channel, r.chat, r.kind, r.message_id, r.method) == ("telegram", str(CHAT), "text", "1", "sendMessage")
    assert r.text == params["text"] and r.buttons == ("Yes", "No")


async def test_message_ids_increase_per_chat(emu):
    _, _, call, _ = emu
    ids = []
    for chat in (CHAT, CHAT, 5, CHAT):
        ids.append((await call("sendMessage", {"chat_id": chat, "text": "x"}))[1]["result"]["message_id"])
    assert ids == [1, 2, 1, 3]


async def test_multipart_document_upload_records_name_and_size(emu):
    _, events, call, _ = emu
    form = aiohttp.FormData()
    form.add_field("chat_id", str(CHAT))
    form.add_field("caption", "your report")
    form.add_field("document", b"%PDF-1.4 hello", filename="report.pdf", content_type="application/pdf")
    status, body = await call("sendDocument", form, how="multipart")
    assert status == 200
    doc = body["result"]["document"]
    assert doc["file_name"] == "report.pdf" and doc["file_size"] == 14 and doc["mime_type"] == "application/pdf"
    assert body["result"]["caption"] == "your report"
    ev = events[0]
    assert ev.request["document"] == {"upload": "report.pdf", "size": 14, "content_type": "application/pdf"}
    assert ev.reply.kind == "document" and ev.reply.text == "your report"


async def test_photo_by_file_id(emu):
    _, events, call, _ = emu
    status, body = await call("sendPhoto", {"chat_id": CHAT, "photo": "AgACfileid"})
    assert status == 200 and body["result"]["photo"][0]["width"] == 800
    assert events[0].reply.kind == "photo" and events[0].reply.text == ""


async def test_edit_then_not_modified_then_delete(emu):
    _, events, call, _ = emu
    mid = (await call("sendMessage", {"chat_id": CHAT, "text": "v1"}))[1]["result"]["message_id"]
    status, body = await call("editMessageText", {"chat_id": CHAT, "message_id": mid, "text": "v2"})
    assert status == 200 and body["result"]["text"] == "v2" and "edit_date" in body["result"]
    assert events[-1].reply.kind == "edit" and events[-1].reply.message_id == str(mid)
    status, body = await call("editMessageText", {"chat_id": CHAT, "message_id": mid, "text": "v2"})
    assert status == 400 and body["description"].startswith("Bad Request: message is not modified")
    assert (await call("deleteMessage", {"chat_id": CHAT, "message_id": mid}))[0] == 200
    assert (await call("deleteMessage", {"chat_id": CHAT, "message_id": mid}))[0] == 400


async def test_chat_action_and_callback_answer_are_events_without_reply(emu):
    _, events, call, _ = emu
    assert (await call("sendChatAction", {"chat_id": CHAT, "action": "typing"})) == (200, {"ok": True, "result": True})
    assert (await call("answerCallbackQuery", {"callback_query_id": f"1-{CHAT}", "text": "ok"}))[0] == 200
    assert [e.name for e in events] == ["telegram.sendChatAction", "telegram.answerCallbackQuery"]
    assert all(e.reply is None and e.keys == (f"tg:{CHAT}",) for e in events)


async def test_get_me(emu):
    _, _, call, _ = emu
    status, body = await call("getMe", http="GET")
    me = body["result"]
    assert status == 200 and me["is_bot"] is True and me["id"] == 123456
    assert {"first_name", "username", "can_join_groups", "can_read_all_group_messages", "supports_inline_queries"} <= me.keys()


async def test_webhook_lifecycle_and_get_updates_conflict(emu):
    em, events, call, _ = emu
    assert (await call("getUpdates"))[1] == {"ok": True, "result": []}
    status, body = await call(
        "setWebhook",
        {"url": "http://127.0.0.1:1/hook", "secret_token": "S-1_x", "allowed_updates": ["message"], "max_connections": 5},
        how="form",
    )
    assert (status, body) == (200, {"ok": True, "result": True, "description": "Webhook was set"})
    assert em.webhook.secret_token == "S-1_x" and em.webhook.allowed_updates == ("message",)
    assert events[-1].request["secret_token"] == "***"  # secrets stay out of the record
    info = (await call("getWebhookInfo"))[1]["result"]
    assert info == {"url": "http://127.0.0.1:1/hook", "has_custom_certificate": False, "pending_update_count": 0,
                    "max_connections": 5, "allowed_updates": ["message"]}
    em.note_delivery_error("Wrong response from the webhook: 500 Internal Server Error")
    info = (await call("getWebhookInfo"))[1]["result"]
    assert info["last_error_message"].startswith("Wrong response") and info["last_error_date"] == 1_700_000_000
    status, body = await call("getUpdates")
    assert status == 409 and body["description"].startswith("Conflict: can't use getUpdates method while webhook is active")
    assert (await call("deleteWebhook"))[1]["description"] == "Webhook was deleted"
    assert (await call("getWebhookInfo"))[1]["result"]["url"] == ""
    assert [w.url for w in em.webhook_history] == ["http://127.0.0.1:1/hook", ""]


async def test_get_updates_serves_queued_updates_with_offset(emu):
    em, _, call, _ = emu
    em.enqueue_update({"update_id": 5, "message": {}})
    em.enqueue_update({"update_id": 6, "message": {}})
    assert [u["update_id"] for u in (await call("getUpdates"))[1]["result"]] == [5, 6]
    assert [u["update_id"] for u in (await call("getUpdates", {"offset": 6}))[1]["result"]] == [6]
    assert (await call("getUpdates", {"offset": 7, "timeout": 0.1}))[1]["result"] == []


@pytest.mark.parametrize(
    "code, description, retry_after, expected_extra",
    [
        (429, "Too Many Requests: retry after 3", 3, {"parameters": {"retry_after": 3}}),
        (502, "Bad Gateway", None, {}),
        (403, "Forbidden: bot was blocked by the user", None, {}),
    ],
)
async def test_fail_next_injects_one_error(emu, code, description, retry_after, expected_extra):
    em, events, call, _ = emu
    em.fail_next("SENDMESSAGE", code, description, retry_after=retry_after)
    status, body = await call("sendMessage", {"chat_id": CHAT, "text": "hi"})
    assert status == code
    assert body == {"ok": False, "error_code": code, "description": description, **expected_extra}
    assert events[0].reply is None and events[0].status == code
    assert (await call("sendMessage", {"chat_id": CHAT, "text": "hi"}))[0] == 200  # only the next one
    assert events[1].reply is not None


async def test_get_file(emu):
    _, _, call, _ = emu
    status, body = await call("getFile", {"file_id": "BQACabc"})
    assert status == 200 and body["result"]["file_id"] == "BQACabc" and body["result"]["file_path"]
    assert (await call("getFile", {}))[0] == 400


async def test_a_failing_sink_does_not_break_answers():
    def sink(event):
        raise RuntimeError("boom")

    em = BotApiEmulator(TOKEN, sink)
    srv = await listen(em.app(), "telegram")
    try:
        async with aiohttp.ClientSession() as s:
            async with s.post(f"{srv.base_url}/bot{TOKEN}/getMe") as resp:
                assert resp.status == 200
    finally:
        await srv.stop()
