"""The Telegram emulator reads a call as the Bot API server does (tdlib/telegram-bot-api,
Client.cpp and td::HttpReader), so a bot is judged on what real Telegram would do with its call
(issue 24, round 3, session 29): a JSON number or boolean in a text field is its JSON text;
``allow_sending_without_reply=false`` is false; a reply to message id 0 or less is no reply;
the server's own texts for a reply_parameters / reply_markup of the wrong shape; the test
environment's ``/bot<token>/test/<method>`` path; a 413 past the upload limit; a %-escape that
is not UTF-8 refused, not read as U+FFFD. Each bad call has its well-formed twin."""

from __future__ import annotations

import json
import logging

import aiohttp
import pytest

from harness.channels.telegram import BotApiEmulator
from harness.sandbox.server import listen

TOKEN = "123456:ABC-def_ghi"
CHAT = 777
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
async def call():
    em = BotApiEmulator(TOKEN, lambda e: None)
    srv = await listen(em.app(), "telegram")
    async with aiohttp.ClientSession() as session:
        async def do(method, body, ctype="application/json", *, path=None, http="POST"):
            url = f"{srv.base_url}{path or f'/bot{TOKEN}/{method}'}"
            data = json.dumps(body) if isinstance(body, dict) else body
            headers = {"Content-Type": ctype} if ctype else {}
            async with session.request(http, url, data=data, headers=headers) as resp:
                return resp.status, await resp.json(content_type=None)
        yield do
    await srv.stop()


@pytest.mark.parametrize("value, shown", [(123, "123"), (True, "true"), (1.5, "1.5"), ("123", "123")])
async def test_a_json_number_or_boolean_text_is_sent_as_its_json_text(call, value, shown):
    status, answer = await call("sendMessage", {"chat_id": CHAT, "text": value})
    assert status == 200, answer
    assert answer["result"]["text"] == shown


@pytest.mark.parametrize("flag, status", [("false", 400), ("0", 400), ("no", 400), ("", 400),
                                          ("true", 200), ("1", 200), ("YES", 200)])
async def test_allow_sending_without_reply_is_read_as_the_bot_api_reads_a_boolean(call, flag, status):
    body = f"chat_id={CHAT}&text=x&reply_to_message_id=99999&allow_sending_without_reply={flag}"
    got, answer = await call("sendMessage", body, FORM)
    assert got == status, answer
    if status == 400:
        assert answer["description"] == "Bad Request: message to be replied not found"


@pytest.mark.parametrize("rp, status", [({"message_id": 99999, "allow_sending_without_reply": "false"}, 400),
                                        ({"message_id": 99999, "allow_sending_without_reply": False}, 400),
                                        ({"message_id": 99999, "allow_sending_without_reply": True}, 200)])
async def test_allow_sending_without_reply_inside_reply_parameters(call, rp, status):
    got, answer = await call("sendMessage", {"chat_id": CHAT, "text": "x", "reply_parameters": rp})
    assert got == status, answer


@pytest.mark.parametrize("rp", [{"message_id": 0}, {"message_id": -5}, {}])
async def test_a_reply_to_message_id_0_or_less_is_no_reply(call, rp):
    status, answer = await call("sendMessage", {"chat_id": CHAT, "text": "x", "reply_parameters": rp})
    assert status == 200, answer
    assert "reply_to_message" not in answer["result"]


@pytest.mark.parametrize("key, value, text", [
    ("reply_parameters", "nope", "Bad Request: can't parse reply parameters JSON object"),
    ("reply_parameters", [1], "Bad Request: object expected as reply parameters"),
    ("reply_parameters", 5, "Bad Request: object expected as reply parameters"),
    ("link_preview_options", "{x", "Bad Request: can't parse link preview options JSON object"),
    ("link_preview_options", [], "Bad Request: object expected as link preview options"),
    ("reply_markup", "{oops", "Bad Request: can't parse reply keyboard markup JSON object"),
    ("reply_markup", [1], "Bad Request: object expected as reply markup"),
    ("reply_markup", {"keyboard": "abc"}, 'Bad Request: field "keyboard" must be of type Array'),
    ("reply_markup", {"keyboard": ["a"]}, 'Bad Request: field "keyboard" must be an Array of Arrays'),
    ("reply_markup", {"inline_keyboard": "x"}, 'Bad Request: field "inline_keyboard" must be of type Array'),
    ("reply_markup", {"inline_keyboard": [{"text": "a"}]},
     'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'),
])
async def test_objects_of_the_wrong_shape_get_the_bot_api_texts(call, key, value, text):
    status, answer = await call("sendMessage", {"chat_id": CHAT, "text": "x", key: value})
    assert (status, answer["description"]) == (400, text)


@pytest.mark.parametrize("key, value", [("reply_markup", {"keyboard": [["a", {"text": "b"}]]}),
                                        ("reply_markup", {"inline_keyboard": [[{"text": "a", "callback_data": "b"}]]}),
                                        ("link_preview_options", {"is_disabled": True})])
async def test_the_well_formed_objects_pass(call, key, value):
    status, answer = await call("sendMessage", {"chat_id": CHAT, "text": "x", key: value})
    assert status == 200, answer


async def test_the_test_environment_path_and_any_http_method_reach_the_method(call):
    status, answer = await call("sendMessage", {"chat_id": CHAT, "text": "x"}, path=f"/bot{TOKEN}/test/sendMessage")
    assert status == 200, answer
    status, answer = await call("sendMessage", {"chat_id": CHAT, "text": "x"}, http="PUT")
    assert status == 200, answer
    status, answer = await call("sendMessage", {"chat_id": CHAT, "text": "x"}, path=f"/bot{TOKEN}/nope/sendMessage")
    assert status == 404


async def test_past_the_upload_limit_is_413(call, monkeypatch):
    from harness.channels import telegram_emulator

    monkeypatch.setattr(telegram_emulator, "MAX_UPLOAD_BYTES", 1000)
    for size, status in ((1001, 413), (1000, 200)):
        form = aiohttp.FormData()
        form.add_field("chat_id", str(CHAT))
        form.add_field("document", b"x" * size, filename="a.bin")
        got, answer = await call("sendDocument", form, None)
        assert got == status, answer
        if status == 413:
            assert answer == {"ok": False, "error_code": 413, "description": "Request Entity Too Large"}


async def test_a_body_over_the_size_limit_is_413_not_a_400_naming_an_exception(call):
    body = b'{"chat_id": 777, "text": "' + b"a" * (61 * 1024 * 1024) + b'"}'
    status, answer = await call("sendMessage", body)
    assert (status, answer["description"]) == (413, "Request Entity Too Large")


@pytest.mark.parametrize("escaped, status", [("%ED%A0%80", 400), ("%E9", 400), ("%C3%A9", 200)])
async def test_a_percent_escape_that_is_not_utf8_is_refused(call, caplog, escaped, status):
    with caplog.at_level(logging.ERROR):
        got, answer = await call("sendMessage", None, None, path=f"/bot{TOKEN}/sendMessage?chat_id=777&text={escaped}")
        assert got == status, answer
        got, answer = await call("sendMessage", f"chat_id=777&text=a{escaped}", FORM)
        assert got == status, answer
    if status == 400:
        assert answer["description"] == "Bad Request: strings must be encoded in UTF-8"
    else:
        assert answer["result"]["text"] == "aé"
    assert not [r for r in caplog.records if r.exc_info]


async def test_a_json_body_with_a_bom_is_not_json(call):
    body = json.dumps({"chat_id": CHAT, "text": "x"}).encode()
    status, _ = await call("sendMessage", b"\xef\xbb\xbf" + body)
    assert status == 400
    status, _ = await call("sendMessage", body)
    assert status == 200


async def test_get_updates_in_a_tight_loop_waits_as_the_bot_api_makes_it(monkeypatch):
    """A bot polling getUpdates with timeout 0 in a loop spun the emulator (every call answered at
    once, each one recorded). The Bot API makes the same offset again within 3 s wait 3 s; the
    twins: the first call and a new offset (the bot moved on) are answered at once."""
    import asyncio

    from harness.channels import telegram_methods

    waits: list[float] = []

    async def no_wait(awaitable, timeout):  # records how long the call would wait, waits not at all
        waits.append(timeout)
        awaitable.close()
        raise asyncio.TimeoutError

    monkeypatch.setattr(telegram_methods.asyncio, "wait_for", no_wait)
    em = BotApiEmulator(TOKEN, lambda e: None)
    for offset in (0, 5, 5, 5):
        assert await em._m_getUpdates({"offset": offset, "timeout": 0}, 0.0) == []
    assert waits == [3.0, 3.0]  # the first two (offsets 0, then 5) did not wait at all
