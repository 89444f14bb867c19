"""Record and replay through the real gateway on loopback.

The upstream here is a test double (an OpenAI-shaped aiohttp app that counts its calls
and reports usage); the gateway, the cassette file and the metering are the real ones.
"""

from __future__ import annotations

import json

import aiohttp
import pytest
from aiohttp import web

from harness.errors import ConfigError
from harness.models.prices import load_prices
from harness.sandbox.cassettes import Cassette, request_key
from harness.sandbox.gateway import LlmGateway
from harness.sandbox.metering import Meter
from harness.sandbox.server import listen


def fake_upstream(calls: list):  # test double: an OpenAI-compatible provider
    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        calls.append(body)
        text = "summary of " + body["messages"][-1]["content"]
        return web.json_response({"id": f"c{len(calls)}", "model": body["model"],
                                  "choices": [{"message": {"role": "assistant", "content": text}}],
                                  "usage": {"prompt_tokens": 100, "completion_tokens": 20}})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    return app


def body_for(docs_base: str, user: str = "42") -> dict:
    return {"model": "claude-3-sonnet-20240229", "temperature": 0, "user": user,
            "messages": [{"role": "system", "content": "You are DocBot"},
                         {"role": "user", "content": f"Source: {docs_base}/paper.pdf"}]}


async def gateway(events, upstream="", cassette=None):
    gw = LlmGateway(events.append, upstream=upstream)
    gw.meter = Meter(load_prices(), simulated=False)
    gw.cassette = cassette
    return await listen(gw.app(), "gateway")


async def post(base: str, body: dict) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as http:
        async with http.post(base + "/v1/chat/completions", json=body) as resp:
            return resp.status, await resp.json()


def test_request_key_ignores_user_and_run_specific_loopback_addresses():
    a = body_for("http://127.0.0.1:40001/c/abcdef123456", user="1")
    b = body_for("http://127.0.0.1:50002/c/zzzzzz999999", user="2")
    assert request_key(a) == request_key(b)
    c = dict(a, temperature=0.7)
    assert request_key(c) != request_key(a)


async def test_record_then_replay_without_upstream_and_a_miss_is_a_502(tmp_path):
    calls: list = []
    up = await listen(fake_upstream(calls), "fake upstream (test double)")
    path = tmp_path / "cassettes" / "run.jsonl"
    events: list = []
    gw = await gateway(events, up.base_url + "/v1", Cassette(path, "record"))
    try:
        status, live = await post(gw.base_url, body_for("http://127.0.0.1:40001/c/abcdef123456"))
    finally:
        await gw.stop()
        await up.stop()
    assert status == 200 and len(calls) == 1 and path.is_file()
    assert events[-1].meta["cost_usd"] > 0 and not events[-1].meta.get("replayed")
    assert "{docs}" in path.read_text()  # the run's own address is not baked into the cassette

    events.clear()
    gw = await gateway(events, "", Cassette(path, "replay"))  # no upstream at all
    try:
        new_base = "http://127.0.0.1:50002/c/zzzzzz999999"
        status, replayed = await post(gw.base_url, body_for(new_base, user="7"))
        miss_status, miss = await post(gw.base_url, dict(body_for(new_base), model="gpt-4o"))
    finally:
        await gw.stop()
    assert status == 200 and len(calls) == 1  # nothing reached an upstream
    content = replayed["choices"][0]["message"]["content"]
    assert new_base in content and "{docs}" not in content  # this run's link, not the recording's
    hit, missed = events
    assert hit.meta["replayed"] is True and hit.meta["cost_usd"] == 0.0 and hit.meta["input_tokens"] == 100
    assert miss_status == 502 and "cassette miss" in miss["error"]["message"]
    assert missed.meta["replay_miss"] is True and missed.status == 502 and "cassette miss" in missed.error


def test_replay_without_a_cassette_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        Cassette(tmp_path / "none.jsonl", "replay")
    with pytest.raises(ConfigError):
        Cassette(tmp_path / "x.jsonl", "sometimes")


def test_a_corrupt_cassette_names_the_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"key": "k", "response": {}}) + "\nnot json\n")
    with pytest.raises(ConfigError) as err:
        Cassette(p, "replay")
    assert "line 2" in str(err.value)
