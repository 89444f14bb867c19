"""The gateway's one resolution, driven by the official ``openai`` SDK as a bot would: calls are
tied to their case by ``safety_identifier``, ``metadata`` or content, and a case's fault
reaches its calls however they are tied."""

from __future__ import annotations

import openai
import pytest
from aiohttp import web

from harness.sandbox.faults import FaultBook
from harness.sandbox.gateway import LlmGateway
from harness.sandbox.router import Router
from harness.sandbox.server import listen


@pytest.fixture
async def stack():
    async def complete(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "fine"}}],
                                  "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})

    up_app = web.Application()
    up_app.router.add_post("/chat/completions", complete)
    up = await listen(up_app, "upstream")
    router, book = Router(), FaultBook(max_hang_s=5)
    gateway = LlmGateway(router.record, upstream=up.base_url)
    gateway.faults, gateway.keys_of = book, router.llm_keys
    gw = await listen(gateway.app(), "gateway")
    a = router.open("a", ["tg:700000001", "user:700000001"])
    b = router.open("b", ["tg:700000002", "user:700000002"])
    router.sent(a, ["what is the weather in Oslo"])
    router.sent(b, ["book me a table for two"])
    client = openai.AsyncOpenAI(base_url=gw.base_url + "/v1", api_key="k", max_retries=0)
    yield client, router, book, a, b
    await client.close()
    book.release_all()
    await gw.stop()
    await up.stop()


def _msgs(text: str) -> list:
    return [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": text}]


async def test_sdk_calls_are_tied_by_content_safety_identifier_and_metadata(stack):
    client, router, _, a, b = stack
    await client.chat.completions.create(model="gpt-4o-mini", messages=_msgs("what is the weather in Oslo"))
    await client.chat.completions.create(model="gpt-4o-mini", messages=_msgs("unrelated"),
                                         safety_identifier="700000002")
    await client.chat.completions.create(model="gpt-4o-mini", messages=_msgs("unrelated"),
                                         metadata={"chat": "tg-700000001"}, store=True)
    await client.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "user", "content": [{"type": "text", "text": "Book me a table for two"}]}])  # content parts
    assert [e.meta.get("attributed", "") for _, e in a.events] == ["content", ""]
    assert [e.meta.get("attributed", "") for _, e in b.events] == ["", "content"]
    assert not router.unattributed


async def test_a_case_fault_reaches_its_unkeyed_calls_only(stack):
    client, router, book, a, b = stack
    book.arm(b.keys, {"llm": {"status": 429, "retry_after": 1, "times": 1}})
    ok = await client.chat.completions.create(model="gpt-4o-mini", messages=_msgs("what is the weather in Oslo"))
    assert ok.choices[0].message.content == "fine"  # a's call: untouched
    with pytest.raises(openai.RateLimitError):
        await client.chat.completions.create(model="gpt-4o-mini", messages=_msgs("book me a table for two"))
    faulted = b.events[0][1]
    assert faulted.status == 429 and faulted.meta["retry_after"] == 1.0


async def test_an_unattributable_call_marks_the_running_cases(stack):
    client, router, _, a, b = stack
    await client.chat.completions.create(model="gpt-4o-mini", messages=_msgs("something nobody sent"))
    assert len(router.unattributed) == 1
    assert a.unattributed_of(0)["llm"] == b.unattributed_of(0)["llm"] == 1
