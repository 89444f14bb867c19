"""Malformed calls to the channel emulators get the 400 the real APIs give, never a 500 with a
traceback (issue 24): a lone surrogate in ``text``, a non-number ``timeout``, a list ``action``,
JSON nested past any parser's depth, broken multipart; and a reply to a message the chat does
not have, which real Telegram refuses unless ``allow_sending_without_reply`` is set."""

from __future__ import annotations

import json
import logging

import aiohttp
import pytest

from harness.channels.telegram import BotApiEmulator
from harness.channels.whatsapp import GraphApiEmulator
from harness.sandbox.server import listen

TOKEN = "123456:ABC-def_ghi"
CHAT = 777
DEEP = "[" * 100_000 + "]" * 100_000
BROKEN_MULTIPART = (b"--XyZ\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n777\r\n"
                    b"--XyZ\r\nContent-Disposition: form-data; name=\"text\"\r\n")  # no end, no boundary close


@pytest.fixture
async def telegram():
    events: list = []
    em = BotApiEmulator(TOKEN, events.append)
    srv = await listen(em.app(), "telegram")
    async with aiohttp.ClientSession() as session:
        async def call(method, *, data=None, headers=None):
            async with session.post(f"{srv.base_url}/bot{TOKEN}/{method}", data=data, headers=headers) as resp:
                return resp.status, await resp.json(content_type=None)
        yield call, events
    await srv.stop()


@pytest.mark.parametrize("method, body, ctype", [
    ("sendMessage", '{"chat_id": 777, "text": "hi \\ud800 there"}', "application/json"),
    ("getUpdates", '{"timeout": "soon"}', "application/json"),
    ("getUpdates", '{"timeout": [1]}', "application/json"),
    ("getUpdates", '{"offset": {"a": 1}}', "application/json"),
    ("sendChatAction", '{"chat_id": 777, "action": ["typing"]}', "application/json"),
    ("sendChatAction", '{"chat_id": 777, "action": {"x": 1}}', "application/json"),
    ("sendMessage", '{"chat_id": [777], "text": "hi"}', "application/json"),
    ("sendMessage", '{"chat_id": 777, "text": ["hi"]}', "application/json"),
    ("sendMessage", '{"chat_id": 777, "text": "hi", "parse_mode": ["HTML"]}', "application/json"),
    ("sendMessage", '{"chat_id": 777, "text": "hi", "reply_parameters": "nope"}', "application/json"),
    ("sendMessage", '{"chat_id": 777, "text": "hi", "reply_parameters": {"message_id": "x"}}', "application/json"),
    ("sendMessage", '{"chat_id": 777, "text": "hi", "entities": [{"type": "bold", "offset": "0", "length": 2}]}',
     "application/json"),
    ("sendMessage", '{"chat_id": 777, "text": "hi", "reply_markup": {"inline_keyboard": "x"}}', "application/json"),
    ("editMessageText", '{"chat_id": 777, "message_id": [1], "text": "x"}', "application/json"),
    ("sendMessage", '{"chat_id": 777, "text": ' + DEEP + '}', "application/json"),
    ("sendMessage", '{"chat_id": 777, "reply_markup": ' + DEEP + ', "text": "x"}', "application/json"),
    ("sendMessage", "chat_id=777&reply_markup=" + DEEP + "&text=x", "application/x-www-form-urlencoded"),
    ("sendMessage", BROKEN_MULTIPART, "multipart/form-data; boundary=XyZ"),
    ("sendMessage", b"\xff\xfe\x00garbage", "application/json"),
])
async def test_telegram_answers_400_not_500(telegram, caplog, method, body, ctype):
    call, events = telegram
    with caplog.at_level(logging.ERROR):
        status, answer = await call(method, data=body, headers={"Content-Type": ctype})
    assert status == 400, answer
    assert answer["ok"] is False and answer["error_code"] == 400
    assert answer["description"].startswith("Bad Request: ")
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert events and events[-1].status == 400  # still recorded: the agent's bad call is a finding


async def test_telegram_reply_to_a_missing_message_is_refused(telegram):
    call, _ = telegram
    body = {"chat_id": CHAT, "text": "hi", "reply_parameters": {"message_id": 4242}}
    status, answer = await call("sendMessage", data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert (status, answer["description"]) == (400, "Bad Request: message to be replied not found")
    body["reply_parameters"]["allow_sending_without_reply"] = True
    status, answer = await call("sendMessage", data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert status == 200 and "reply_to_message" not in answer["result"]
    # the old-style parameter is refused the same way
    old = {"chat_id": CHAT, "text": "hi", "reply_to_message_id": 4242}
    status, answer = await call("sendMessage", data=json.dumps(old), headers={"Content-Type": "application/json"})
    assert (status, answer["description"]) == (400, "Bad Request: message to be replied not found")


async def test_telegram_reply_to_an_existing_message_is_accepted(telegram):
    call, _ = telegram
    status, first = await call("sendMessage", data=json.dumps({"chat_id": CHAT, "text": "one"}),
                               headers={"Content-Type": "application/json"})
    assert status == 200
    mid = first["result"]["message_id"]
    body = {"chat_id": CHAT, "text": "two", "reply_parameters": {"message_id": mid}}
    status, answer = await call("sendMessage", data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert status == 200 and answer["result"]["reply_to_message"]["message_id"] == mid


@pytest.fixture
async def whatsapp():
    events: list = []
    em = GraphApiEmulator("1234567890", "wa-token", events.append)
    srv = await listen(em.app(), "whatsapp")
    async with aiohttp.ClientSession() as session:
        async def call(path, *, data, ctype="application/json"):
            async with session.post(f"{srv.base_url}{path}", data=data,
                                    headers={"Content-Type": ctype, "Authorization": "Bearer wa-token"}) as resp:
                return resp.status, await resp.json(content_type=None)
        yield call, events
    await srv.stop()


@pytest.mark.parametrize("body, ctype", [
    ('{"messaging_product": "whatsapp", "to": "447", "type": "text", "text": ' + DEEP + '}', "application/json"),
    ("messaging_product=whatsapp&to=447&type=text&text=" + DEEP, "application/x-www-form-urlencoded"),
    ('{"messaging_product": "whatsapp", "to": "447", "type": "text", "text": {"body": "a \\udc00 b"}}',
     "application/json"),
    ('{"messaging_product": "whatsapp", "to": ["447"], "type": "text", "text": {"body": "x"}}', "application/json"),
    ('{"messaging_product": "whatsapp", "to": "447", "type": ["text"], "text": {"body": "x"}}', "application/json"),
    ('{"messaging_product": "whatsapp", "to": "447", "type": "text", "text": "x"}', "application/json"),
    (b"\xff\xfe\x00", "application/json"),
])
async def test_whatsapp_answers_400_not_500(whatsapp, caplog, body, ctype):
    call, events = whatsapp
    with caplog.at_level(logging.ERROR):
        status, answer = await call("/v21.0/1234567890/messages", data=body, ctype=ctype)
    assert status == 400, answer
    assert isinstance(answer.get("error"), dict) and answer["error"].get("message")
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@pytest.mark.parametrize("entity", [{"type": "bold", "offset": "0", "length": 2}, {"type": "bold", "offset": 0},
                                    {"type": "bold", "offset": None, "length": "x"}, {"type": "bold", "offset": -1,
                                                                                      "length": 2}])
def test_a_stored_entity_of_the_wrong_shape_does_not_crash_reply_entities(entity):
    from harness.checks.entities import entities
    from harness.types import Case, Observation, Reply, Turn, TurnObservation

    reply = Reply(channel="telegram", chat="1", text="hi there", at=1.0, method="sendMessage", entities=(entity,))
    obs = Observation(case_id="c", channel="telegram", chat_id="1", started_at=0.0, finished_at=1.0,
                      turns=(TurnObservation(index=0, sent_at=0.0, delivery_status=200, delivery_error="",
                                             replies=(reply,), events=(), settled_after_s=0.1),))
    case = Case(id="c", layer="robustness", channel="telegram", turns=(Turn(send="x"),))
    ev = entities(case, obs, 0, {"bold": "hi"})
    assert ev.passed is False and "missing bold 'hi'" in ev.reason


async def test_the_llm_gateway_answers_400_to_json_nested_past_the_parser(caplog):
    """Issue 24 (round 3): the sandbox's LLM gateway, like the emulators, answers a body nested
    past any parser's depth with a 400, not a 500 and a logged traceback; so do the form check
    and the webhook answer parser."""
    from aiohttp import web

    from harness.checks.form import parse_json
    from harness.sandbox.gateway import LlmGateway

    async def upstream(request):
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "x"}}]})

    up_app = web.Application()
    up_app.router.add_post("/chat/completions", upstream)
    up = await listen(up_app, "upstream")
    events: list = []
    gw = await listen(LlmGateway(events.append, upstream=up.base_url).app(), "gateway")
    try:
        async with aiohttp.ClientSession() as session:
            with caplog.at_level(logging.ERROR):
                async with session.post(f"{gw.base_url}/chat/completions", data='{"model": "m", "messages": ' + DEEP + "}",
                                        headers={"Content-Type": "application/json"}) as resp:
                    status = resp.status
        assert status == 400
        assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    finally:
        await gw.stop()
        await up.stop()
    assert parse_json(DEEP)[0] is None


@pytest.mark.parametrize("body, status", [
    (b"--X\r\nContent-Disposition: form-data; name=\"file\"\r\n", 400),  # truncated: no end, no close
    (b"--X\r\nContent-Disposition: form-data; name=\"messaging_product\"\r\n\r\n\xff\xfe\r\n--X--\r\n", 400),
    (b"--X\r\nContent-Disposition: form-data; name=\"messaging_product\"\r\n\r\nwhatsapp\r\n"
     b"--X\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n"
     b"PNG\r\n--X--\r\n", 200),  # the well-formed twin
])
async def test_whatsapp_media_upload_with_broken_multipart_is_400(whatsapp, caplog, body, status):
    """Issue 24, session 29: a broken multipart media upload was a 500 with a logged traceback."""
    call, _ = whatsapp
    with caplog.at_level(logging.ERROR):
        got, answer = await call("/v21.0/1234567890/media", data=body, ctype="multipart/form-data; boundary=X")
    assert got == status, answer
    assert ("id" in answer) if status == 200 else isinstance(answer.get("error"), dict)
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@pytest.mark.parametrize("context, status", [("wamid.x", 400), ({"message_id": ["x"]}, 400), ({}, 400),
                                             ({"message_id": "wamid.HBgM"}, 200)])
async def test_whatsapp_context_of_the_wrong_shape_is_400(whatsapp, context, status):
    call, _ = whatsapp
    body = {"messaging_product": "whatsapp", "to": "447700900001", "type": "text", "text": {"body": "x"},
            "context": context}
    got, answer = await call("/v21.0/1234567890/messages", data=json.dumps(body))
    assert got == status, answer


@pytest.mark.parametrize("body", [b"\xff\xfe not utf-8", b'{"q": "ok"}'])
async def test_the_tool_double_takes_a_body_that_is_not_utf8(caplog, body):
    """Issue 24, session 29: a tool call whose body is not UTF-8 was a 500 with a logged traceback;
    it is a call like any other (recorded, answered)."""
    from harness.sandbox.spy import ToolSpy

    events: list = []
    srv = await listen(ToolSpy(events.append).app(), "tools")
    try:
        async with aiohttp.ClientSession() as session:
            with caplog.at_level(logging.ERROR):
                async with session.post(f"{srv.base_url}/search", data=body,
                                        headers={"Content-Type": "application/json"}) as resp:
                    status = resp.status
    finally:
        await srv.stop()
    assert status == 200
    assert len(events) == 1 and events[0].name.endswith("search")
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@pytest.mark.parametrize("mode", ["record", "replay"])
async def test_the_cassette_takes_a_lone_surrogate_in_the_prompt_and_the_answer(tmp_path, caplog, mode):
    """Issue 24, session 29: with llm_mode record or replay, a prompt or an upstream answer holding
    a lone surrogate (a JSON "\\ud800") was a 500 with a logged traceback (the cassette's hash and
    its line were encoded as strict UTF-8); and a cassette that cannot be written fails no call."""
    from aiohttp import web

    from harness.sandbox.cassettes import Cassette
    from harness.sandbox.gateway import LlmGateway

    async def upstream(request):
        return web.json_response({"id": "x", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok \ud800"}, "finish_reason": "stop"}]})

    up_app = web.Application()
    up_app.router.add_post("/chat/completions", upstream)
    up = await listen(up_app, "upstream")
    path = tmp_path / "c.jsonl"
    statuses = []
    for run_mode in ("record", mode):
        gw_obj = LlmGateway(lambda e: None, upstream=up.base_url)
        gw_obj.cassette = Cassette(path, run_mode)
        gw = await listen(gw_obj.app(), "gateway")
        try:
            async with aiohttp.ClientSession() as session:
                for body in ('{"model": "m", "messages": [{"role": "user", "content": "a \\ud800"}]}',
                             '{"model": "m", "messages": [{"role": "user", "content": "a"}]}'):  # the twin
                    with caplog.at_level(logging.ERROR):
                        async with session.post(f"{gw.base_url}/v1/chat/completions", data=body,
                                                headers={"Content-Type": "application/json"}) as resp:
                            statuses.append(resp.status)
                            answer = await resp.json()
                    assert answer["choices"][0]["message"]["content"] == "ok \ud800"
        finally:
            await gw.stop()
    await up.stop()
    assert statuses == [200, 200, 200, 200]
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert len(path.read_text().splitlines()) == 2


async def test_a_cassette_that_cannot_be_written_fails_no_call(tmp_path, caplog):
    from aiohttp import web

    from harness.sandbox.cassettes import Cassette
    from harness.sandbox.gateway import LlmGateway

    async def upstream(request):
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "x"}}]})

    up_app = web.Application()
    up_app.router.add_post("/chat/completions", upstream)
    up = await listen(up_app, "upstream")
    (tmp_path / "c.jsonl").mkdir()  # a folder where the cassette file goes
    gw_obj = LlmGateway(lambda e: None, upstream=up.base_url)
    gw_obj.cassette = Cassette(tmp_path / "c.jsonl", "record")
    gw = await listen(gw_obj.app(), "gateway")
    try:
        async with aiohttp.ClientSession() as session:
            with caplog.at_level(logging.ERROR):
                async with session.post(f"{gw.base_url}/v1/chat/completions", data='{"model": "m", "messages": []}',
                                        headers={"Content-Type": "application/json"}) as resp:
                    status = resp.status
    finally:
        await gw.stop()
        await up.stop()
    assert status == 200
    assert not [r for r in caplog.records if r.exc_info]


_CHUNK = b'data: {"choices": [{"delta": {"content": "ok"}}]}\n\n'


@pytest.mark.parametrize("provider, bad", [
    ("openai", b'data: {"choices": {"a": 1}}\n\n'),
    ("openai", b'data: {"choices": ["x"]}\n\n'),
    ("openai", b'data: {"choices": [{"delta": [1]}]}\n\n'),
    ("openai", b'data: {"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}\n\n'),
    ("openai", b'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": 5}}]}}]}\n\n'),
    ("openai", b'data: {"choices": [{"delta": {"tool_calls": {"a": 1}}}]}\n\n'),
    ("anthropic", b'data: {"type": "content_block_delta", "index": "x", "delta": {"type": "text_delta", "text": "a"}}\n\n'),
    ("anthropic", b'data: {"type": "content_block_delta", "index": 0, "delta": [1]}\n\n'),
    ("anthropic", b'data: {"type": "content_block_start", "index": 0, "content_block": [1]}\n\n'),
    ("anthropic", b'data: {"type": "message_start", "message": "x"}\n\n'),
])
def test_a_streamed_chunk_of_the_wrong_shape_is_one_broken_frame(provider, bad):
    """Issue 24, session 29: an upstream (or proxy) stream chunk of the wrong shape raised out of
    the gateway's pass-through (the agent's stream cut, a traceback logged); it is one broken
    frame, and the well-formed frames around it are still read."""
    from harness.sandbox.stream_capture import StreamCapture

    good = (_CHUNK if provider == "openai" else
            b'data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}\n\n')
    capture = StreamCapture(provider)
    capture.feed(good + bad + good)
    out = capture.completion()
    assert capture.broken == 1 and capture.frames == 3
    text = out["choices"][0]["message"]["content"] if provider == "openai" else out["content"][0]["text"]
    assert text == "okok"


def test_a_stream_that_never_ends_a_frame_costs_bounded_memory_and_linear_time():
    """A stream of 8 MB with no blank line: each chunk was joined to all before it and searched
    again (13 s of CPU for 8 MB, the whole stream held); now a frame past MAX_FRAME is dropped as
    broken and the frames after it are read. The twin: a CRLF stream fed a byte at a time."""
    from harness.sandbox import stream_capture

    capture = stream_capture.StreamCapture("openai")
    for _ in range(2000):
        capture.feed(b"x" * 4096)
        assert len(capture._buf) <= stream_capture.MAX_FRAME
    capture.feed(b"\n\n" + _CHUNK)
    assert capture.broken >= 1 and capture.completion()["choices"][0]["message"]["content"] == "ok"
    crlf = _CHUNK.replace(b"\n", b"\r\n") * 2
    capture = stream_capture.StreamCapture("openai")
    for i in range(len(crlf)):
        capture.feed(crlf[i:i + 1])
    assert capture.completion()["choices"][0]["message"]["content"] == "okok" and capture.broken == 0


@pytest.mark.parametrize("which", ["telegram", "whatsapp", "gateway", "tools"])
async def test_a_body_that_does_not_decompress_is_400_and_the_next_call_works(caplog, which):
    """Issue 24, session 29: a body sent with Content-Encoding: deflate that is not deflate was a
    500 with a traceback (the gateway, the tool double) or a 400 with aiohttp's own "Unhandled
    exception" traceback logged (the emulators), and the client's next call on the same
    connection failed with "Server disconnected". Now: 400, nothing logged, the next call (the
    twin, a well-formed one) answered."""
    from harness.sandbox.gateway import LlmGateway
    from harness.sandbox.spy import ToolSpy

    app, path, good, ok = {
        "telegram": (BotApiEmulator(TOKEN, lambda e: None).app(), f"/bot{TOKEN}/sendMessage",
                     {"chat_id": CHAT, "text": "x"}, 200),
        "whatsapp": (GraphApiEmulator("1234567890", "wa-token", lambda e: None).app(), "/v21.0/1234567890/messages",
                     {"messaging_product": "whatsapp", "to": "447700900001", "type": "text", "text": {"body": "x"}}, 200),
        "gateway": (LlmGateway(lambda e: None).app(), "/v1/chat/completions", {"model": "m", "messages": []}, 200),
        "tools": (ToolSpy(lambda e: None).app(), "/search", {"q": "x"}, 200),
    }[which]
    srv = await listen(app, which)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer wa-token"}
    try:
        async with aiohttp.ClientSession() as session:
            with caplog.at_level(logging.ERROR):
                async with session.post(f"{srv.base_url}{path}", data=b"not deflate at all",
                                        headers={**headers, "Content-Encoding": "deflate"}) as resp:
                    assert resp.status == 400
                    await resp.read()
                async with session.post(f"{srv.base_url}{path}", data=json.dumps(good), headers=headers) as resp:
                    assert resp.status == ok, await resp.text()
    finally:
        await srv.stop()
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
