"""A webhook that answers without end (a chunked body that never stops) is read up to a cap, not
into the harness's memory until the delivery times out (issue 24): the run ends, the case fails
with the reason, and nothing more than the cap was taken from the agent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402

ENDLESS = '''
from aiohttp import web

SENT = []


def make_app(env):
    async def telegram(request):
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        chunk = b"[" * 65536
        try:
            for _ in range(20_000):  # 1.3 GB if nobody stops reading
                await resp.write(chunk)
                SENT.append(len(chunk))
        except (ConnectionResetError, ConnectionError):
            pass
        return resp

    app = web.Application()
    app.router.add_post("/telegram", telegram)
    return app
'''


def test_an_endless_webhook_answer_is_read_up_to_a_cap(tmp_path, capsys, monkeypatch):
    (tmp_path / "endless_bot.py").write_text(ENDLESS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "endless_bot", raising=False)
    cfg = make_project(tmp_path, cases=echo_cases(1))
    cfg.write_text(cfg.read_text().replace('inprocess = "tests.agents.echo:make_app"', 'inprocess = "endless_bot:make_app"'))
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1"]) == 1
    assert "internal error" not in capsys.readouterr().err
    import endless_bot

    assert sum(endless_bot.SENT) < 200_000_000  # the harness stopped reading near the 4 MB cap
    text = (tmp_path / "reports" / "r1" / "results.json").read_text()
    assert json.loads(text)["summary"]["failed"] == 1


NESTED_STATE = '''
from aiohttp import web


def make_app(env):
    async def telegram(request):
        return web.Response(status=200)

    async def state(request):
        return web.Response(text="[" * 100_000 + "]" * 100_000, content_type="application/json")

    app = web.Application()
    app.router.add_post("/telegram", telegram)
    app.router.add_get("/state/{chat}", state)
    return app
'''


def test_a_state_probe_answer_nested_past_parsing_is_unavailable_not_a_crash(tmp_path, capsys, monkeypatch):
    (tmp_path / "nested_state_bot.py").write_text(NESTED_STATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "nested_state_bot", raising=False)
    case = ('layer: robustness\ncases:\n  - id: st\n    send: "hi"\n'
            '    expect: {state: {"$.task": {absent: true}}}\n')
    cfg = make_project(tmp_path, cases=case)
    cfg.write_text(cfg.read_text().replace('inprocess = "tests.agents.echo:make_app"',
                                           'inprocess = "nested_state_bot:make_app"\nstate_url = "on"'))
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1"])
    assert "internal error" not in capsys.readouterr().err
    results = json.loads((tmp_path / "reports" / "r1" / "results.json").read_text())
    evidence = [e for t in results["cases"][0]["turns"] for e in t.get("evidence", [])] or \
        results["cases"][0].get("evidence", [])
    assert code in (0, 1, 3) and results["cases"][0]["status"] != "pass", results["cases"][0]["status"]
    assert "state probe failed: RecursionError" in json.dumps(results), evidence


def test_a_webhook_answer_nested_past_parsing_is_no_method_call():
    from harness.channels.telegram import _webhook_call

    deep = '{"method": "sendMessage", "chat_id": 1, "text": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert _webhook_call(200, deep) is None  # RecursionError out of the delivery before


async def test_a_half_sent_request_held_open_does_not_hold_up_the_servers_stop(monkeypatch):
    """Issue 24, session 29: a bot that sends a request's headers and part of its body, then holds
    the connection open, held each sandbox server's stop for aiohttp's 60 s (the Bot API emulator,
    the gateway... one after the other at the end of the run). The stop waits SHUTDOWN_S for
    requests in flight; the twin: a request that completes is answered as before."""
    import asyncio

    import aiohttp

    from harness.channels.telegram import BotApiEmulator
    from harness.sandbox import server

    monkeypatch.setattr(server, "SHUTDOWN_S", 0.5)
    srv = await server.listen(BotApiEmulator("1:a", lambda e: None).app(), "telegram")
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{srv.base_url}/bot1:a/getMe") as resp:
            assert resp.status == 200
    reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
    writer.write(b"POST /bot1:a/sendMessage HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 1000\r\n\r\n{")
    await writer.drain()
    await asyncio.sleep(0.2)  # the request is in flight (its handler waits for the body)
    try:
        await asyncio.wait_for(srv.stop(), timeout=30)  # (aiohttp's default: 60 s)
    finally:
        writer.close()


async def test_a_webhook_that_redirects_gets_nothing_sent_on():
    """Issue 24, session 29: a webhook answering 307 to another address made the harness POST the
    user's update and the webhook's secret token (WhatsApp: the payload and its signature; the
    verification GET: the verify token) on to it, off loopback if the bot said so, and count the
    delivery as 200. Telegram and Meta do not follow a webhook's redirect: the harness neither;
    the 307 is the delivery's status. The twin: a webhook answering 200 is delivered."""
    import aiohttp
    from aiohttp import web

    from harness.channels.telegram import deliver_update
    from harness.channels.whatsapp import deliver_payload, verify_webhook
    from harness.sandbox.server import listen

    seen: list = []

    async def elsewhere(request):
        seen.append((request.method, dict(request.headers), await request.read()))
        return web.Response(text=request.query.get("hub.challenge", "ok"))

    other_app = web.Application()
    other_app.router.add_route("*", "/x", elsewhere)
    other = await listen(other_app, "elsewhere")

    async def hook(request):
        if request.path == "/fine":
            return web.Response(text="")
        raise web.HTTPTemporaryRedirect(other.base_url + "/x?" + request.query_string)

    bot_app = web.Application()
    bot_app.router.add_route("*", "/{p}", hook)
    bot = await listen(bot_app, "bot")
    try:
        async with aiohttp.ClientSession() as session:
            tg = await deliver_update(session, f"{bot.base_url}/hook", {"update_id": 1}, "secret-token-1", 5)
            wa = await deliver_payload(session, f"{bot.base_url}/hook", {"object": "x"}, "app-secret-1", 5)
            ver = await verify_webhook(session, f"{bot.base_url}/hook", "verify-token-1", 5)
            fine = await deliver_update(session, f"{bot.base_url}/fine", {"update_id": 2}, "secret-token-1", 5)
    finally:
        await bot.stop()
        await other.stop()
    assert (tg.status, wa.status, ver.status) == (307, 307, 307)
    assert not tg.ok and not ver.ok
    assert seen == [], seen
    assert fine.status == 200 and fine.ok


async def test_an_app_served_twice_still_starts():
    """An in-process agent whose factory returns one module-level app is served once per run (and
    twice by two runs in one process): the sandbox's guard is added to an app only while it can
    be (a served app is frozen), never a RuntimeError."""
    import aiohttp
    from aiohttp import web

    from harness.sandbox.server import listen

    async def hello(request):
        return web.Response(text="hi")

    app = web.Application()
    app.router.add_get("/", hello)
    for _ in range(2):
        srv = await listen(app, "agent")
        try:
            async with aiohttp.ClientSession() as session, session.get(srv.base_url + "/") as resp:
                assert (resp.status, await resp.text()) == (200, "hi")
        finally:
            await srv.stop()
