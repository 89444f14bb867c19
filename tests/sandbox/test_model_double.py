"""The model double on the gateway, driven by the official ``openai`` and ``anthropic`` SDKs over
real loopback HTTP: what a bot's own SDK sees (answers, tool calls, streams, errors) and
what the gateway records (an ``llm`` event per call, tokens, ``double: True``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import anthropic
import openai
import pytest
from aiohttp import web

from harness.models.prices import load_prices
from harness.sandbox import model_double as double
from harness.sandbox import model_wire as wire
from harness.sandbox.cassettes import Cassette
from harness.sandbox.gateway import LlmGateway
from harness.sandbox.stream_capture import StreamCapture
from harness.sandbox.metering import Meter
from harness.sandbox.server import listen

TOOLS = [{"type": "function", "function": {
    "name": "create_order", "description": "Create an order",
    "parameters": {"type": "object", "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}},
                   "required": ["item", "quantity"]}}}]
A_TOOLS = [{"name": "create_order", "description": "Create an order",
            "input_schema": TOOLS[0]["function"]["parameters"]}]
ORDER = [{"tool_calls": [{"name": "create_order", "arguments": {"item": "widget", "quantity": 3}}]},
         {"text": "Order {tool_result.id} is {tool_result.status}"}]


class Stack:
    def __init__(self, gateway: LlmGateway, base: str, events: list):
        self.gateway, self.base, self.events = gateway, base, events
        self.scripts = gateway.scripts

    def openai(self, **kw) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=self.base + "/v1", api_key="sk-test", max_retries=0, **kw)

    def openai_sync(self, **kw) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base + "/v1", api_key="sk-test", max_retries=0, **kw)

    def anthropic(self, **kw) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(base_url=self.base, api_key="sk-ant-test", max_retries=0, **kw)

    def anthropic_sync(self, **kw) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.base, api_key="sk-ant-test", max_retries=0, **kw)

    def llm(self) -> list:
        return [e for e in self.events if e.name == "llm"]


async def _stack(upstream: str = "", anthropic_upstream: str = "", cassette=None) -> tuple[Stack, object]:
    events: list = []
    gw = LlmGateway(events.append, upstream=upstream, anthropic_upstream=anthropic_upstream)
    gw.scripts = double.ScriptBook()
    gw.meter = Meter(load_prices())
    gw.cassette = cassette
    srv = await listen(gw.app(), "gateway")
    return Stack(gw, srv.base_url, events), srv


@pytest.fixture
async def stack():
    s, srv = await _stack()
    yield s
    s.scripts.release_all()
    await srv.stop()


def _msgs(text: str = "order 3 widgets") -> list:
    return [{"role": "system", "content": "You sell widgets."}, {"role": "user", "content": text}]


# --------------------------------------------------------------------------- OpenAI


async def test_no_upstream_and_no_script_the_double_answers_never_503(stack):
    r = await stack.openai().chat.completions.create(model="gpt-4o-mini", messages=_msgs("hello there"))
    assert r.choices[0].message.content == "double: hello there"
    assert r.choices[0].finish_reason == "stop" and r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    (e,) = stack.llm()
    assert e.status == 200 and e.meta["double"] is True and e.meta["provider"] == "openai"
    assert e.meta["script"] == "default" and e.meta["tokens_source"] == "usage"
    assert e.meta["input_tokens"] == r.usage.prompt_tokens and e.meta["output_tokens"] == r.usage.completion_tokens
    assert e.meta["cost_usd"] > 0 and stack.gateway.double_calls == 1 and stack.gateway.double_scripted == 0
    assert e.meta["simulated"] is True  # priced at list prices, billed to nobody


async def test_sync_client_gets_the_same_answers(stack):
    client = stack.openai_sync()
    r = await asyncio.to_thread(client.chat.completions.create, model="gpt-4o", messages=_msgs("hi"))
    assert r.choices[0].message.content == "double: hi"
    chunks = await asyncio.to_thread(lambda: list(client.chat.completions.create(
        model="gpt-4o", messages=_msgs("hi"), stream=True, stream_options={"include_usage": True})))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "double: hi"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


async def test_tool_calls_then_a_template_over_the_tool_result(stack):
    stack.scripts.arm(["user:u1"], ORDER)
    client = stack.openai()
    msgs = _msgs()
    r = await client.chat.completions.create(model="gpt-4o", messages=msgs, tools=TOOLS, user="u1")
    (call,) = r.choices[0].message.tool_calls
    assert r.choices[0].finish_reason == "tool_calls" and r.choices[0].message.content is None
    assert call.function.name == "create_order" and json.loads(call.function.arguments) == {"item": "widget",
                                                                                             "quantity": 3}
    msgs += [r.choices[0].message.model_dump(exclude_none=True),
             {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"id": "A-17", "status": "created"})}]
    r2 = await client.chat.completions.create(model="gpt-4o", messages=msgs, tools=TOOLS, user="u1")
    assert r2.choices[0].message.content == "Order A-17 is created"
    r3 = await client.chat.completions.create(model="gpt-4o", messages=msgs, tools=TOOLS, user="u1")
    assert r3.choices[0].message.content == "Order A-17 is created"  # the last step repeats
    first, second, _ = stack.llm()
    assert first.meta["output_tokens"] > 0 and first.meta["estimated"] is True  # tool-call output counted
    assert second.meta["input_tokens"] > first.meta["input_tokens"]  # the tool call and its result are input
    assert first.meta["script"] == "key" and stack.gateway.double_scripted == 3


async def test_a_script_is_only_for_its_own_keys(stack):
    stack.scripts.arm(["user:u1"], [{"text": "scripted"}])
    r = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs("x"), user="u2")
    assert r.choices[0].message.content == "double: x"
    r = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs("x"))
    assert r.choices[0].message.content == "double: x"  # no key, and not solo: not the script
    stack.scripts.solo = True  # one case at a time: a keyless call takes the only armed script
    r = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs("x"))
    assert r.choices[0].message.content == "scripted" and stack.llm()[-1].meta["script"] == "sole-armed"


async def test_disarmed_script_no_longer_answers(stack):
    armed = stack.scripts.arm(["user:u1"], [{"text": "scripted"}])
    stack.scripts.disarm(armed)
    r = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs("x"), user="u1")
    assert r.choices[0].message.content == "double: x"


@pytest.mark.parametrize("include_usage", [True, False])
async def test_stream_with_and_without_the_usage_chunk(stack, include_usage):
    kw = {"stream_options": {"include_usage": True}} if include_usage else {}
    stream = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs("stream me please"),
                                                          stream=True, **kw)
    chunks = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "double: stream me please"
    usage = [c.usage for c in chunks if c.usage is not None]
    (e,) = stack.llm()
    assert e.meta["stream"] is True and e.meta["output_tokens"] > 0
    if include_usage:
        assert len(usage) == 1 and chunks[-1].choices == [] and usage[0].completion_tokens == e.meta["output_tokens"]
        assert e.meta["tokens_source"] == "usage" and e.meta["estimated"] is False
    else:
        assert usage == [] and e.meta["tokens_source"].startswith("tiktoken:") and e.meta["estimated"] is True


async def test_streamed_tool_calls_accumulate_to_the_arguments(stack):
    stack.scripts.arm(["user:u1"], [{"tool_calls": [{"name": "create_order", "arguments": {"item": "widget",
                                                                                            "quantity": 3}}],
                                     "usage": True}])
    stream = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), tools=TOOLS,
                                                          user="u1", stream=True)
    args, name, finish = "", "", None
    async for c in stream:
        for ch in c.choices:
            for tc in ch.delta.tool_calls or ():
                name += tc.function.name or ""
                args += tc.function.arguments or ""
            finish = ch.finish_reason or finish
    assert name == "create_order" and json.loads(args) == {"item": "widget", "quantity": 3}
    assert finish == "tool_calls"
    (e,) = stack.llm()
    assert e.meta["tokens_source"] == "usage" and e.meta["output_tokens"] > 0  # usage: true sent the chunk


async def test_refusal_model_name_and_finish_reason(stack):
    stack.scripts.arm(["user:u1"], [{"refusal": "I can't help with that", "model": "gpt-4o-2024-08-06"},
                                    {"text": "cut", "finish_reason": "length"}])
    r = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1")
    assert r.choices[0].message.refusal == "I can't help with that" and r.choices[0].message.content is None
    assert r.model == "gpt-4o-2024-08-06" and stack.llm()[0].meta["upstream_model"] == "gpt-4o-2024-08-06"
    r = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1")
    assert r.choices[0].finish_reason == "length" and r.choices[0].message.content == "cut"


async def test_429_in_openais_error_shape_with_retry_after(stack):
    stack.scripts.arm(["user:u1"], [{"status": 429, "retry_after": 2}, {"text": "ok now"}])
    with pytest.raises(openai.RateLimitError) as err:
        await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1")
    assert err.value.response.headers["Retry-After"] == "2"
    assert err.value.body["code"] == "rate_limit_exceeded" and err.value.body["type"] == "requests"
    r = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1")
    assert r.choices[0].message.content == "ok now"
    failed, ok = stack.llm()
    assert failed.status == 429 and failed.meta["double"] is True and failed.meta["tokens_source"] == "not-billed"
    assert ok.status == 200


async def test_500_is_an_internal_server_error(stack):
    stack.scripts.arm(["user:u1"], [{"status": 500}])
    with pytest.raises(openai.InternalServerError):
        await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1")


@pytest.mark.parametrize("stream", [False, True])
async def test_malformed_answer_breaks_the_sdk(stack, stream):
    stack.scripts.arm(["user:u1"], [{"malformed": True}])
    client = stack.openai()
    with pytest.raises(Exception) as err:
        r = await client.chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1", stream=stream)
        if stream:
            async for _ in r:
                pass
    assert not isinstance(err.value, AssertionError)
    (e,) = stack.llm()
    assert e.status == 200 and "malformed" in e.error


async def test_timeout_hangs_until_the_client_gives_up_then_is_recorded(stack):
    armed = stack.scripts.arm(["user:u1"], [{"timeout": True}])
    with pytest.raises(openai.APITimeoutError):
        await stack.openai(timeout=0.5).chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1")
    stack.scripts.disarm(armed)
    for _ in range(100):
        if stack.llm():
            break
        await asyncio.sleep(0.05)
    (e,) = stack.llm()
    assert e.status == 504 and "timeout" in e.error


async def test_delays_still_answer(stack):
    stack.scripts.arm(["user:u1"], [{"text": "slow words here", "delay_ms": 20, "token_delay_ms": 5,
                                     "stream": True}])
    stream = await stack.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1", stream=True)
    assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) == "slow words here"


# --------------------------------------------------------------------------- Anthropic


async def test_anthropic_messages_sync_and_async(stack):
    m = await stack.anthropic().messages.create(model="claude-3-5-sonnet-latest", max_tokens=100,
                                                system="Be brief.", messages=[{"role": "user", "content": "hi"}])
    assert m.content[0].type == "text" and m.content[0].text == "double: hi" and m.stop_reason == "end_turn"
    assert m.usage.input_tokens > 0 and m.usage.output_tokens > 0
    client = stack.anthropic_sync()
    m2 = await asyncio.to_thread(client.messages.create, model="claude-3-5-sonnet-latest", max_tokens=100,
                                 messages=[{"role": "user", "content": "yo"}])
    assert m2.content[0].text == "double: yo"
    first = stack.llm()[0]
    assert first.meta["provider"] == "anthropic" and first.meta["double"] is True
    assert first.meta["tokens_source"] == "usage" and first.meta["estimated"] is True  # not an OpenAI model
    assert first.meta["system_prompts"] == ["Be brief."]


async def test_anthropic_tool_use_then_template_over_the_tool_result_streamed(stack):
    stack.scripts.solo = True
    stack.scripts.arm(["user:x"], ORDER)
    client = stack.anthropic()
    msgs = [{"role": "user", "content": "order 3 widgets"}]
    async with client.messages.stream(model="claude-3-5-sonnet-latest", max_tokens=200, tools=A_TOOLS,
                                      messages=msgs) as s:
        m = await s.get_final_message()
    (use,) = [b for b in m.content if b.type == "tool_use"]
    assert use.name == "create_order" and use.input == {"item": "widget", "quantity": 3}
    assert m.stop_reason == "tool_use" and m.usage.output_tokens > 0
    msgs += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in m.content]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                           "content": json.dumps({"id": "A-17", "status": "created"})}]}]
    async with client.messages.stream(model="claude-3-5-sonnet-latest", max_tokens=200, tools=A_TOOLS,
                                      messages=msgs) as s:
        text = "".join([t async for t in s.text_stream])
        final = await s.get_final_message()
    assert text == "Order A-17 is created" and final.usage.input_tokens > m.usage.input_tokens
    first, second = stack.llm()
    assert first.meta["stream"] is True and first.meta["tokens_source"] == "usage"
    assert first.meta["output_tokens"] == m.usage.output_tokens


async def test_anthropic_errors_in_anthropics_shape(stack):
    stack.scripts.solo = True
    stack.scripts.arm(["user:x"], [{"status": 429, "retry_after": 1}, {"status": 529}])
    client = stack.anthropic()
    with pytest.raises(anthropic.RateLimitError) as err:
        await client.messages.create(model="claude-3-5-haiku-latest", max_tokens=10,
                                     messages=[{"role": "user", "content": "hi"}])
    assert err.value.body["error"]["type"] == "rate_limit_error" and err.value.response.headers["retry-after"] == "1"
    with pytest.raises(anthropic.APIStatusError) as err:
        await client.messages.create(model="claude-3-5-haiku-latest", max_tokens=10,
                                     messages=[{"role": "user", "content": "hi"}])
    assert err.value.status_code == 529 and err.value.body["error"]["type"] == "overloaded_error"


async def test_an_injected_fault_reaches_an_anthropic_call_in_anthropics_shape(stack):
    from harness.sandbox.faults import FaultBook

    stack.gateway.faults = FaultBook()
    stack.gateway.faults.arm(["tok:abcdefgh12"], {"llm": {"status": 429, "retry_after": 1, "times": 1}})
    with pytest.raises(anthropic.RateLimitError) as err:
        await stack.anthropic().messages.create(model="claude-3-haiku-20240307", max_tokens=10, messages=[
            {"role": "user", "content": "read http://127.0.0.1:1/c/abcdefgh12/a.pdf"}])
    assert err.value.body["error"]["type"] == "rate_limit_error" and err.value.response.headers["retry-after"] == "1"


# --------------------------------------------------------------------------- a real upstream


class Upstream:
    """A provider on loopback that streams in two halves: the second only once the test says so."""

    def __init__(self, usage: bool = True):
        self.usage = usage
        self.release = asyncio.Event()
        self.calls = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.openai)
        app.router.add_post("/v1/messages", self.anthropic)
        return app

    async def openai(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        body = await request.json()
        if body["messages"][-1]["content"] == "rate me":
            return web.json_response(wire.error_body("openai", 429, "slow down"), status=429,
                                     headers={"Retry-After": "3", "x-ratelimit-remaining-requests": "0"})
        answer = wire.Answer(provider="openai", model="gpt-4o-2024-08-06", text="from the real upstream",
                               usage=(11, 4))
        if not body.get("stream"):
            return web.json_response(wire.completion(answer))
        frames = wire.stream_events(answer, self.usage)
        return await self._two_halves(request, frames)

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        body = await request.json()
        assert "sk-ant-test" in (request.headers.get("x-api-key", "") + request.headers.get("Authorization", ""))
        answer = wire.Answer(provider="anthropic", model="claude-3-5-sonnet-20241022", text="from anthropic",
                               usage=(21, 6))
        if not body.get("stream"):
            return web.json_response(wire.completion(answer))
        return await self._two_halves(request, wire.stream_events(answer, True))

    async def _two_halves(self, request, frames) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(frames[0] + frames[1])
        await asyncio.wait_for(self.release.wait(), 10)
        for f in frames[2:]:
            await resp.write(f)
        await resp.write_eof()
        return resp


@pytest.fixture
async def upstream_stack(request):
    up = Upstream(usage=getattr(request, "param", True))
    srv_up = await listen(up.app(), "upstream")
    s, srv = await _stack(upstream=srv_up.base_url + "/v1", anthropic_upstream=srv_up.base_url)
    yield s, up
    up.release.set()
    await srv.stop()
    await srv_up.stop()


@pytest.mark.parametrize("upstream_stack", [True, False], indirect=True)
async def test_a_forwarded_stream_passes_chunk_by_chunk_and_is_read_back(upstream_stack, request):
    s, up = upstream_stack
    with_usage = request.node.callspec.params["upstream_stack"]
    kw = {"stream_options": {"include_usage": True}} if with_usage else {}
    stream = await s.openai().chat.completions.create(model="gpt-4o", messages=_msgs("hi"), stream=True, **kw)
    it = stream.__aiter__()
    first = await asyncio.wait_for(it.__anext__(), 10)  # arrives before the upstream finished: not buffered
    assert first.choices[0].delta.role == "assistant"
    up.release.set()
    rest = [c async for c in it]
    assert "".join(c.choices[0].delta.content or "" for c in [first, *rest] if c.choices) == "from the real upstream"
    (e,) = s.llm()
    assert "double" not in e.meta and e.meta["stream"] is True and e.meta["upstream_model"] == "gpt-4o-2024-08-06"
    assert e.meta["simulated"] is False
    if with_usage:
        assert (e.meta["input_tokens"], e.meta["output_tokens"]) == (11, 4)
        assert e.meta["tokens_source"] == "usage" and e.meta["estimated"] is False
    else:  # counted from the streamed text: not 0, and labelled an estimate
        assert e.meta["output_tokens"] > 0 and e.meta["tokens_source"] == "tiktoken:o200k_base"
        assert e.meta["estimated"] is True


async def test_a_script_wins_over_the_upstream_for_its_turn(upstream_stack):
    s, up = upstream_stack
    s.scripts.arm(["user:u1"], [{"text": "scripted"}])
    r = await s.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u1")
    assert r.choices[0].message.content == "scripted" and up.calls == 0
    r = await s.openai().chat.completions.create(model="gpt-4o", messages=_msgs(), user="u2")
    assert r.choices[0].message.content == "from the real upstream" and up.calls == 1
    assert s.gateway.double_calls == 1


async def test_an_upstream_error_reaches_the_sdk_with_its_retry_after(upstream_stack):
    s, _up = upstream_stack
    with pytest.raises(openai.RateLimitError) as err:
        await s.openai().chat.completions.create(model="gpt-4o", messages=_msgs("rate me"))
    assert err.value.response.headers["retry-after"] == "3"
    assert err.value.response.headers["x-ratelimit-remaining-requests"] == "0"
    (e,) = s.llm()
    assert e.status == 429 and e.meta["tokens_source"] == "not-billed" and "double" not in e.meta


async def test_anthropic_upstream_stream_usage_from_message_start_and_delta(upstream_stack):
    s, up = upstream_stack
    up.release.set()
    async with s.anthropic().messages.stream(model="claude-3-5-sonnet-latest", max_tokens=50,
                                             messages=[{"role": "user", "content": "hi"}]) as st:
        text = "".join([t async for t in st.text_stream])
    assert text == "from anthropic"
    (e,) = s.llm()
    assert (e.meta["input_tokens"], e.meta["output_tokens"], e.meta["tokens_source"]) == (21, 6, "usage")
    assert e.meta["provider"] == "anthropic" and "double" not in e.meta


async def test_stream_recorded_then_replayed_as_a_stream(tmp_path: Path):
    up = Upstream()
    up.release.set()
    srv_up = await listen(up.app(), "upstream")
    path = tmp_path / "c.jsonl"
    s, srv = await _stack(upstream=srv_up.base_url + "/v1", cassette=Cassette(path, "record"))
    try:
        stream = await s.openai().chat.completions.create(model="gpt-4o", messages=_msgs("hi"), stream=True)
        assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) \
            == "from the real upstream"
    finally:
        await srv.stop()
    s, srv = await _stack(cassette=Cassette(path, "replay"))
    try:
        stream = await s.openai().chat.completions.create(model="gpt-4o", messages=_msgs("hi"), stream=True)
        assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) \
            == "from the real upstream"
        with pytest.raises(openai.APIStatusError) as err:  # not recorded: a miss, never the double
            await s.openai().chat.completions.create(model="gpt-4o", messages=_msgs("other"))
        assert err.value.status_code == 502
        replayed, missed = s.llm()
        assert replayed.meta["replayed"] is True and missed.meta["replay_miss"] is True
        assert "double" not in missed.meta and s.gateway.double_calls == 0
    finally:
        await srv.stop()
        await srv_up.stop()


# --------------------------------------------------------------------------- units


def test_a_keyless_call_goes_to_the_turn_in_flight_only_when_that_is_unambiguous():
    book = double.ScriptBook()
    a = book.arm(["user:a"], [{"text": "A"}])
    b = book.arm(["user:b"], [])  # a turn without a script is in flight too
    assert book.take([]) is None and book.unmatched == 1  # not solo: never guessed
    book.solo = True
    assert book.take([]) is None and book.unmatched == 2  # two turns working: ambiguous
    a.watching = True  # A's replies are in; B is the case working now: its (empty) script
    assert book.take([]) is None and book.unmatched == 2
    book.disarm(b)
    step, armed, how = book.take([])  # only A left, watching its closing window: its script
    assert (step.text, armed, how) == ("A", a, "sole-armed")
    assert book.take(["user:b"]) is not None  # b disarmed: its key no longer matches, A still solo
    assert book.take(["user:a"])[2] == "key"


@pytest.mark.parametrize("script,problem", [
    ([], "model must be a step"),
    ("hello", "model must be a step"),
    ([{"text": 3}], "text must be a string"),
    ([{"txt": "a"}], "unknown key(s) ['txt']"),
    ([{"text": "a", "refusal": "b"}], "exactly one of"),
    ([{"stream": True}], "exactly one of"),
    ([{"tool_calls": []}], "tool_calls must be a list"),
    ([{"tool_calls": [{"arguments": {}}]}], "needs a name"),
    ([{"tool_calls": [{"name": "f", "arguments": 3}]}], "arguments must be a table or a JSON string"),
    ([{"tool_calls": [{"name": "f", "args": {}}]}], "unknown key(s) ['args']"),
    ([{"status": 200}], "status must be an HTTP error"),
    ([{"status": 429, "retry_after": -1}], "retry_after must be a non-negative"),
    ([{"text": "a", "retry_after": 1}], "retry_after goes with status"),
    ([{"malformed": False}], "malformed must be true"),
    ([{"text": "a", "stream": "yes"}], "stream must be true or false"),
    ([{"text": "a", "delay_ms": -5}], "delay_ms must be an integer"),
    ([{"text": "a", "model": ""}], "model must be a non-empty string"),
])
def test_bad_scripts_are_refused_with_the_reason(script, problem):
    assert problem in (double.validate(script) or "")


@pytest.mark.parametrize("script", [
    {"text": "one step as a table"},
    ORDER,
    [{"tool_calls": {"name": "f", "arguments": "{broken json"}}],
    [{"status": 429, "retry_after": 2}, {"timeout": True}, {"malformed": True}, {"refusal": "no"}],
    [{"text": "a", "stream": True, "usage": False, "delay_ms": 5, "token_delay_ms": 1, "model": "gpt-4o",
      "finish_reason": "length"}],
])
def test_good_scripts_pass(script):
    assert double.validate(script) is None and double.parse(script)


@pytest.mark.parametrize("template,want", [
    ("{last_user}", "order 3"),
    ("{tool_result}", '{"id": "A-17", "items": [{"sku": "w"}]}'),
    ("{tool_result.id}", "A-17"),
    ("{tool_result.items.0.sku}", "w"),
    ("{tool_result.items}", '[{"sku": "w"}]'),
    ("{tool_result.nope}", "{?tool_result.nope}"),
    ("{unknown}", "{?unknown}"),
    ('JSON stays {"a": 1}', 'JSON stays {"a": 1}'),
])
def test_templates_fill_or_leave_a_visible_marker(template, want):
    ctx = double.request_context({"messages": [
        {"role": "user", "content": "order 3"},
        {"role": "tool", "tool_call_id": "c", "content": '{"id": "A-17", "items": [{"sku": "w"}]}'}]})
    assert double.render(template, ctx) == want


def test_templates_without_a_tool_result_leave_markers():
    ctx = double.request_context({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
    assert double.render("{last_user} {tool_result} {tool_result.id}", ctx) == "hi {?tool_result} {?tool_result.id}"


def test_anthropic_tool_result_is_the_template_source():
    ctx = double.request_context({"messages": [
        {"role": "user", "content": "order"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                      "content": [{"type": "text", "text": '{"id": "B-2"}'}]}]}]})
    assert double.render("{tool_result.id} for {last_user}", ctx) == "B-2 for order"


def test_stream_capture_reads_openai_chunks_split_anywhere():
    answer = wire.Answer(provider="openai", model="gpt-4o", text="hello world",
                           tool_calls=[{"id": "c1", "name": "f", "arguments": '{"q": 3}'}], usage=(7, 5))
    data = b"".join(wire.stream_events(answer, True))
    cap = StreamCapture("openai")
    for i in range(0, len(data), 7):  # frames cut across reads
        cap.feed(data[i:i + 7])
    out = cap.completion()
    msg = out["choices"][0]["message"]
    assert msg["content"] == "hello world" and msg["tool_calls"][0]["function"] == {"name": "f",
                                                                                     "arguments": '{"q": 3}'}
    assert out["usage"]["completion_tokens"] == 5 and out["choices"][0]["finish_reason"] == "tool_calls"


def test_stream_capture_reads_anthropic_events():
    answer = wire.Answer(provider="anthropic", model="claude", text="hi",
                           tool_calls=[{"id": "t1", "name": "f", "arguments": '{"q": 3}'}], usage=(9, 4))
    cap = StreamCapture("anthropic")
    cap.feed(b"".join(wire.stream_events(answer, True)))
    out = cap.completion()
    assert out["content"] == [{"type": "text", "text": "hi"},
                              {"type": "tool_use", "id": "t1", "name": "f", "input": {"q": 3}}]
    assert out["usage"] == {"input_tokens": 9, "output_tokens": 4} and out["stop_reason"] == "tool_use"


async def test_the_gateway_answers_plain_http_too(stack):
    async with aiohttp.ClientSession() as session:
        async with session.post(stack.base + "/v1/chat/completions", data=b"not json") as r:
            assert r.status == 400 and "error" in await r.json()
        async with session.post(stack.base + "/v1/messages", data=b"[1]") as r:
            body = await r.json()
            assert r.status == 400 and body["type"] == "error"
