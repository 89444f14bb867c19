"""The tool double over real loopback HTTP: scripted answers per case, faults, forward, records."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web

from harness.sandbox.faults import FaultBook
from harness.sandbox.server import listen
from harness.sandbox.spy import ToolScripts, ToolSpy, fill, validate


@pytest.fixture
async def double():
    events: list = []
    scripts, book = ToolScripts(), FaultBook(max_hang_s=5)

    async def real(request: web.Request) -> web.Response:  # the real service a forward reaches
        body = await request.json() if request.can_read_body else {}
        return web.json_response({"real": True, "got": body, "q": dict(request.query)}, status=201)

    up_app = web.Application()
    up_app.router.add_route("*", "/stock", real)
    up = await listen(up_app, "real tool service")
    spy = ToolSpy(events.append)
    spy.scripts, spy.faults = scripts, book
    srv = await listen(spy.app(), "tools")
    async with aiohttp.ClientSession() as session:
        yield session, srv.base_url, scripts, book, events, up.base_url
    book.release_all()
    await srv.stop()
    await up.stop()


async def _call(session, url, json=None, method="POST", params=None):
    async with session.request(method, url, json=json, params=params) as r:
        return r.status, dict(r.headers), await r.json(content_type=None)


async def test_scripted_answers_in_order_for_the_armed_case_only(double):
    session, base, scripts, _, events, _ = double
    scripts.arm(["user:1"], {"create_order": [{"status": 503, "json": {"error": "busy"}, "retry_after": 1},
                                              {"json": {"id": "A-17", "quantity": "{args.quantity}",
                                                        "note": "for {args.item}", "x": "{args.nope}"}}]})
    status, headers, body = await _call(session, f"{base}/create_order", {"chat_id": 1, "item": "widget",
                                                                          "quantity": 3})
    assert status == 503 and headers["Retry-After"] == "1" and body == {"error": "busy"}
    for _ in range(2):  # the last result repeats
        status, _, body = await _call(session, f"{base}/create_order", {"chat_id": 1, "item": "widget",
                                                                        "quantity": 3})
        assert status == 200 and body == {"id": "A-17", "quantity": 3, "note": "for widget", "x": "{?args.nope}"}
    status, _, body = await _call(session, f"{base}/create_order", {"chat_id": 2, "quantity": 3})  # another case
    assert status == 200 and body == {"ok": True}
    first = events[0]
    assert first.source == "tools" and first.name == "create_order" and first.status == 503
    assert first.request == {"chat_id": 1, "item": "widget", "quantity": 3} and first.meta["retry_after"] == 1.0
    assert first.meta["double"] is True and first.meta["method"] == "POST" and "user:1" in first.keys
    assert events[1].response["quantity"] == 3


async def test_get_query_parameters_are_the_arguments(double):
    session, base, scripts, _, events, _ = double
    scripts.arm(["user:7"], {"lookup": {"json": {"sku": "{args.sku}"}}})
    status, _, body = await _call(session, f"{base}/lookup", method="GET", params={"sku": "W-1", "user_id": "7"})
    assert status == 200 and body == {"sku": "W-1"}
    assert events[0].request == {"sku": "W-1", "user_id": "7"} and events[0].meta["method"] == "GET"


async def test_a_tools_fault_targets_one_tool_and_comes_before_the_script(double):
    session, base, scripts, book, events, _ = double
    scripts.arm(["user:1"], {"create_order": {"json": {"id": "A-17"}}})
    book.arm(["user:1"], {"tools": {"status": 500, "retry_after": 2, "times": 1, "tool": "create_order"}})
    status, _, _ = await _call(session, f"{base}/confirm", {"chat_id": 1})
    assert status == 200  # another tool: untouched
    status, headers, body = await _call(session, f"{base}/create_order", {"chat_id": 1})
    assert status == 500 and headers["Retry-After"] == "2" and "injected" in body["error"]
    status, _, body = await _call(session, f"{base}/create_order", {"chat_id": 1})
    assert status == 200 and body == {"id": "A-17"}  # times: 1
    faulted = events[1]
    assert faulted.error.startswith("injected HTTP 500") and faulted.meta["retry_after"] == 2.0


async def test_forward_reaches_the_real_service_and_records_its_answer(double):
    session, base, scripts, _, events, real = double
    scripts.arm(["user:1"], {"stock": {"forward": f"{real}/stock", "delay_ms": 10}})
    status, _, body = await _call(session, f"{base}/stock", {"chat_id": 1, "sku": "W-1"}, params={"v": "2"})
    assert status == 201 and body["real"] is True and body["got"] == {"chat_id": 1, "sku": "W-1"}
    assert body["q"] == {"v": "2"}
    e = events[0]
    assert e.status == 201 and e.response["real"] is True and e.meta["double"] is False
    assert e.meta["forwarded"] == f"{real}/stock"


async def test_an_unreachable_forward_is_a_recorded_502(double):
    session, base, scripts, _, events, _ = double
    scripts.arm(["user:1"], {"stock": {"forward": "http://127.0.0.1:9/none"}})
    status, _, body = await _call(session, f"{base}/stock", {"chat_id": 1})
    assert status == 502 and "forward to" in body["error"] and events[0].status == 502


def test_fill_keeps_types_and_marks_the_unfillable():
    args = {"quantity": 3, "items": [{"sku": "W-1"}], "who": {"name": "Ann"}}
    assert fill({"q": "{args.quantity}", "s": "{args.items.0.sku}", "t": "x{args.quantity}y",
                 "w": "{args.who}", "m": "{args.missing}"}, args) == \
        {"q": 3, "s": "W-1", "t": "x3y", "w": {"name": "Ann"}, "m": "{?args.missing}"}


@pytest.mark.parametrize("spec,problem", [
    ({"create_order": {"json": {"id": 1}}}, None),
    ({"create_order": [{"status": 503, "retry_after": 1}, {"json": {}}]}, None),
    ({"stock": {"forward": "http://127.0.0.1:9000/x", "delay_ms": 5}}, None),
    ({}, "must be a table"),
    ({"create_order": 3}, "a result is a table"),
    ({"create_order": []}, "empty list"),
    ({"create order": {"json": {}}}, "is not a tool name"),
    ({"create_order": {"jsn": {}}}, "unknown key"),
    ({"create_order": {"status": 700}}, "HTTP status"),
    ({"create_order": {"status": 503, "retry_after": -1}}, "retry_after"),
    ({"create_order": {"delay_ms": 1.5}}, "delay_ms"),
    ({"create_order": {"forward": "ftp://x"}}, "http(s) URL"),
    ({"create_order": {"forward": "http://x", "json": {}}}, "no json or status"),
    ({"create_order": {"retry_after": 1}}, "say what the tool answers"),
])
def test_validate(spec, problem):
    got = validate(spec)
    assert (got is None) if problem is None else (problem in got), got
