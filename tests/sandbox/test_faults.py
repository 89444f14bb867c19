"""Scripted faults over real loopback HTTP: the gateway and the document server misbehave
only for the armed case's keys, only while armed, and exactly as scripted."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from harness.sandbox.docs import DocumentServer
from harness.sandbox.faults import FaultBook, validate
from harness.sandbox.gateway import LlmGateway
from harness.sandbox.server import listen


async def _upstream(request: web.Request) -> web.Response:
    return web.json_response({"choices": [{"message": {"role": "assistant", "content": "fine"}}],
                              "usage": {"prompt_tokens": 3, "completion_tokens": 1}})


@pytest.fixture
async def stack(tmp_path: Path):
    events: list = []
    book = FaultBook(max_hang_s=5)
    up_app = web.Application()
    up_app.router.add_post("/chat/completions", _upstream)
    up = await listen(up_app, "upstream")
    gateway = LlmGateway(events.append, upstream=up.base_url)
    gateway.faults = book
    gw = await listen(gateway.app(), "gateway")
    (tmp_path / "a.txt").write_text("a document")
    docs = DocumentServer(tmp_path, events.append)
    docs.faults = book
    ds = await listen(docs.app(), "docs")
    async with aiohttp.ClientSession() as session:
        yield session, book, gw.base_url, ds.base_url, events
    book.release_all()
    for s in (ds, gw, up):
        await s.stop()


def _chat(user: str) -> dict:
    return {"model": "m", "user": user, "messages": [{"role": "user", "content": "hi"}]}


async def _post(session, base, user, timeout=10):
    async with session.post(f"{base}/v1/chat/completions", json=_chat(user),
                            timeout=aiohttp.ClientTimeout(total=timeout)) as r:
        return r.status, dict(r.headers), await r.text()


async def test_429_with_retry_after_only_for_the_armed_case_and_only_times(stack):
    session, book, gw, _, events = stack
    armed = book.arm(["user:1", "tok:abc"], {"llm": {"status": 429, "retry_after": 2, "times": 1}})
    status, headers, body = await _post(session, gw, "2")  # another case: untouched
    assert status == 200
    status, headers, body = await _post(session, gw, "1")
    assert status == 429 and headers["Retry-After"] == "2" and "injected" in body
    assert (await _post(session, gw, "1"))[0] == 200  # times: 1
    book.disarm(armed)
    llm = [e for e in events if e.name == "llm"]
    assert [e.status for e in llm] == [200, 429, 200]
    assert "injected HTTP 429" in llm[1].error and llm[1].keys[0] == "user:1"


async def test_500_for_every_call_while_armed_then_real_again(stack):
    session, book, gw, _, _ = stack
    armed = book.arm(["user:7"], {"llm": {"status": 500}})
    assert [(await _post(session, gw, "7"))[0] for _ in range(3)] == [500, 500, 500]
    book.disarm(armed)
    assert (await _post(session, gw, "7"))[0] == 200


async def test_delay_then_the_real_answer(stack):
    session, book, gw, _, _ = stack
    book.arm(["user:3"], {"llm": {"delay_ms": 400}})
    t0 = time.perf_counter()
    status, _, body = await _post(session, gw, "3")
    assert status == 200 and "fine" in body and time.perf_counter() - t0 >= 0.4


async def test_malformed_json_is_a_200_that_does_not_parse(stack):
    session, book, gw, _, _ = stack
    book.arm(["user:4"], {"llm": "malformed"})
    status, _, body = await _post(session, gw, "4")
    assert status == 200
    with pytest.raises(ValueError):
        __import__("json").loads(body)


async def test_timeout_hangs_until_the_client_gives_up(stack):
    session, book, gw, _, events = stack
    book.arm(["user:5"], {"llm": "timeout"})
    t0 = time.perf_counter()
    with pytest.raises(asyncio.TimeoutError):
        await _post(session, gw, "5", timeout=0.5)
    assert time.perf_counter() - t0 >= 0.5  # held until the client gave up (a lower bound holds on a busy machine)
    for _ in range(40):  # the gateway notices the hang-up and records the call
        if any(e.name == "llm" for e in events):
            break
        await asyncio.sleep(0.05)
    assert [e.status for e in events if e.name == "llm"] == [504]


async def test_document_server_hang_is_released_when_the_turn_ends(stack):
    session, book, _, docs, events = stack
    armed = book.arm(["tok:tok12345"], {"docs": "hang"})
    fetch = asyncio.ensure_future(session.get(f"{docs}/c/tok12345/a.txt"))
    await asyncio.sleep(0.4)
    assert not fetch.done()  # still hanging
    async with session.get(f"{docs}/c/other999/a.txt") as r:  # another case's fetch is served
        assert r.status == 200 and await r.text() == "a document"
    book.disarm(armed)
    resp = await asyncio.wait_for(fetch, 2)
    assert resp.status == 504
    resp.release()
    fetched = [e for e in events if e.name == "fetch_document"]
    assert sorted(e.status for e in fetched) == [200, 504] and any(e.meta.get("fault") for e in fetched)


async def test_document_server_status_fault(stack):
    session, book, _, docs, _ = stack
    book.arm(["tok:tok12345"], {"docs": {"status": 503}})
    async with session.get(f"{docs}/c/tok12345/a.txt") as r:
        assert r.status == 503


@pytest.mark.parametrize("spec,problem", [
    ({"llm": {"status": 500}}, None),
    ({"llm": [{"status": 429, "retry_after": 1, "times": 1}, {"delay_ms": 10}]}, None),
    ({"docs": "hang", "delivery": "duplicate"}, None),
    ({"llm": "explode"}, "is not one of"),
    ({"llm": {"status": 200}}, "HTTP error"),
    ({"llm": {"times": 2}}, "say what goes wrong"),
    ({"llm": {"status": 500, "bogus": 1}}, "unknown key"),
    ({"docs": "malformed"}, "LLM and tools only"),
    ({"tools": {"status": 500, "retry_after": 1, "times": 1, "tool": "create_order"}}, None),
    ({"tools": "timeout"}, None),
    ({"tools": "malformed"}, None),
    ({"llm": {"status": 500, "tool": "create_order"}}, "applies to tools faults only"),
    ({"tools": {"status": 500, "tool": ""}}, "applies to tools faults only"),
    ({"tools": {"status": 200}}, "HTTP error"),
    ({"telegram": {"status": 500}}, None),
    ({"telegram": "hang"}, "expects a table"),
    ({"whatsapp": {"method": "x", "status": 500}}, "telegram faults only"),
    ({"sms": {"status": 500}}, "unknown fault target"),
    ({"delivery": "sideways"}, "delivery must be"),
    ({}, "must be a table"),
])
def test_validate(spec, problem):
    got = validate(spec)
    assert (got is None) if problem is None else (problem in got)


async def test_channel_faults_in_the_emulators_are_scoped_to_the_case_chat_and_method():
    from harness.channels.telegram import BotApiEmulator
    from harness.channels.whatsapp import GraphApiEmulator

    events: list = []
    book = FaultBook()
    tg = BotApiEmulator("1:tok", events.append)
    tg.case_faults = book
    wa = GraphApiEmulator("555", "watok", events.append)
    wa.case_faults = book
    tgs, was = await listen(tg.app(), "tg"), await listen(wa.app(), "wa")
    book.arm(["tg:42", "wa:4470000000042"], {"telegram": {"method": "sendMessage", "status": 429, "retry_after": 3},
                                             "whatsapp": {"status": 500, "times": 1}})
    try:
        async with aiohttp.ClientSession() as s:
            async def tg_call(method, chat):
                async with s.post(f"{tgs.base_url}/bot1:tok/{method}", json={"chat_id": chat, "text": "hi",
                                                                               "action": "typing"}) as r:
                    return r.status, await r.json()

            status, body = await tg_call("sendMessage", 42)
            assert status == 429 and body["parameters"]["retry_after"] == 3 and not body["ok"]
            assert (await tg_call("sendChatAction", 42))[0] == 200  # another method: untouched
            assert (await tg_call("sendMessage", 43))[0] == 200  # another chat: untouched

            async def wa_send(to):
                async with s.post(f"{was.base_url}/v21.0/555/messages", headers={"Authorization": "Bearer watok"},
                                  json={"messaging_product": "whatsapp", "to": to, "type": "text",
                                        "text": {"body": "hi"}}) as r:
                    return r.status, await r.json()

            status, body = await wa_send("4470000000042")
            assert status == 500 and "Injected fault" in body["error"]["message"]
            assert (await wa_send("4470000000042"))[0] == 200  # times: 1
    finally:
        book.release_all()
        await tgs.stop()
        await was.stop()
