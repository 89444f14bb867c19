"""Alerts reach a local webhook receiver, a local SMTP server (aiosmtpd), the Bot API
emulator and a fake OCI client (a labelled test double); a broken channel never raises."""

from __future__ import annotations


import pytest
from aiohttp import web

from harness.night.alerts import Alert, send_alerts
from harness.sandbox.server import listen
from harness.schema.models import AlertsModel

ALERT = Alert(kind="budget", title="docbot run r1: cost budget exceeded", amount="spent $0.0400 of a $0.0100 budget",
              details="spent by: cost-a ($0.0200)", report="/tmp/reports/r1/report.html", run_id="r1")


def _settings(telegram_token: str = "", oci_client=None, **keys) -> AlertsModel:
    """[alerts] as the config holds it, with the secret and the client the environment / test inject."""
    return AlertsModel(**keys).with_runtime(telegram_token=telegram_token, oci_client=oci_client)


class Receiver:
    """A Slack-compatible webhook receiver on loopback."""

    def __init__(self, fail_first: int = 0):
        self.posts: list = []
        self.fail_first = fail_first

    async def hook(self, request: web.Request) -> web.Response:
        if self.fail_first:
            self.fail_first -= 1
            return web.Response(status=503)
        self.posts.append(await request.json())
        return web.Response(text="ok")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/hook", self.hook)
        return app


class SmtpSink:
    def __init__(self):
        self.messages: list = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.rcpt_tos, envelope.content.decode("utf-8", "replace")))
        return "250 OK"


@pytest.fixture
def smtp():
    from aiosmtpd.controller import Controller

    import socket

    with socket.socket() as s:  # a free port (aiosmtpd's controller cannot take port 0)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sink = SmtpSink()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield sink, port
    finally:
        controller.stop()


async def test_webhook_and_smtp_receive_the_alert(smtp):
    sink, port = smtp
    rx = Receiver(fail_first=1)  # the first try fails: retried with backoff
    srv = await listen(rx.app(), "webhook receiver")
    try:
        s = _settings(webhook_url=srv.base_url + "/hook", smtp_host="127.0.0.1", smtp_port=port,
                          smtp_starttls=False, smtp_to=("team@example.org",), backoff_s=0.01, timeout_s=5)
        results = await send_alerts(None, ALERT, settings=s)
    finally:
        await srv.stop()
    by = {r.channel: r for r in results}
    assert by["webhook"].ok and by["webhook"].attempts == 2
    assert by["email"].ok
    text = rx.posts[0]["text"]
    assert "cost budget exceeded" in text and "$0.0400 of a $0.0100" in text and "/tmp/reports/r1/report.html" in text
    rcpts, mail = sink.messages[0]
    assert rcpts == ["team@example.org"] and "Subject: docbot run r1: cost budget exceeded" in mail
    assert "Report: /tmp/reports/r1/report.html" in mail


async def test_telegram_alert_through_the_bot_api_emulator():
    from harness.channels.telegram import BotApiEmulator

    events: list = []
    token = "123456:alert-token"
    emu = BotApiEmulator(token, events.append)
    srv = await listen(emu.app(), "Bot API emulator")
    try:
        s = _settings(telegram_chat_id="-100200300", telegram_token=token, telegram_api_base=srv.base_url,
                          backoff_s=0.01)
        results = await send_alerts(None, ALERT, settings=s)
    finally:
        await srv.stop()
    assert [r.ok for r in results] == [True]
    sent = [e for e in events if e.name == "telegram.sendMessage"]
    assert sent and "cost budget exceeded" in sent[0].reply.text and sent[0].reply.chat == "-100200300"


class FakeServiceError(Exception):
    """Shaped like oci.exceptions.ServiceError: the HTTP status in ``.status``."""

    def __init__(self, status: int):
        super().__init__(f"ServiceError {status} (fake)")
        self.status = status


class FakeOciClient:  # test double for oci.ons.NotificationDataPlaneClient (labelled)
    def __init__(self, fail: bool = False, status: int = 500):
        self.published: list = []
        self.fail = fail
        self.status = status
        self.calls = 0

    def publish_message(self, topic_id, details):
        self.calls += 1
        if self.fail:
            raise FakeServiceError(self.status)
        self.published.append((topic_id, details.title, details.body))


async def test_oci_notifications_publish_and_body_limit():
    fake = FakeOciClient()
    big = Alert(kind="regression", title="t", details="x" * 100_000)
    s = _settings(oci_topic_id="ocid1.onstopic.oc1..test", oci_client=fake, backoff_s=0.01)
    results = await send_alerts(None, big, settings=s)
    assert results[0].ok and fake.published[0][0] == "ocid1.onstopic.oc1..test"
    assert len(fake.published[0][2].encode()) <= 64 * 1024


async def test_failing_channels_are_retried_then_reported_never_raised():
    s = _settings(webhook_url="http://127.0.0.1:9/refused", oci_topic_id="t", oci_client=FakeOciClient(fail=True),
                      smtp_host="127.0.0.1", smtp_port=9, smtp_to=("a@b",), retries=3, backoff_s=0.01, timeout_s=2)
    results = await send_alerts(None, ALERT, settings=s)
    assert {r.channel for r in results} == {"webhook", "oci", "email"}
    assert all(not r.ok and r.attempts == 3 and r.error for r in results)


async def test_events_not_subscribed_are_not_sent():
    s = _settings(on=("regression",), webhook_url="http://127.0.0.1:9/x")
    assert await send_alerts(None, ALERT, settings=s) == []


def test_alerts_section_typos_and_bad_numbers_are_config_errors(tmp_path):
    import pytest as _pytest

    from harness.night.alerts import validate
    from harness.config import load_config
    from harness.errors import ConfigError

    cfg = tmp_path / "harness.toml"
    cfg.write_text('[alerts]\nwebhok_url_env = "X"\n')
    with _pytest.raises(ConfigError, match="unknown key"):
        validate(load_config(cfg, environ={}))
    cfg.write_text('[alerts]\nsmtp_port = "many"\n')
    with _pytest.raises(ConfigError, match="alerts"):
        validate(load_config(cfg, environ={}))
    cfg.write_text('[alerts]\nwebhook_url_env = "HOOK"\nsmtp_port = 2525\nsmtp_to = ["a@example.org"]\n')
    validate(load_config(cfg, environ={}))


class StatusReceiver(Receiver):
    """Answers each status of ``statuses`` in turn (with its Retry-After), then 200."""

    def __init__(self, statuses, retry_after: str | None = None):
        super().__init__()
        self.statuses = list(statuses)
        self.retry_after = retry_after
        self.tries = 0

    async def hook(self, request: web.Request) -> web.Response:
        self.tries += 1
        if self.statuses:
            headers = {"Retry-After": self.retry_after} if self.retry_after else {}
            return web.Response(status=self.statuses.pop(0), headers=headers)
        self.posts.append(await request.json())
        return web.Response(text="ok")


class Waits(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


async def _webhook_with(rx: Receiver, **kw):
    waits = Waits()
    srv = await listen(rx.app(), "webhook receiver")
    try:
        s = _settings(webhook_url=srv.base_url + "/hook", **{"retries": 3, "backoff_s": 0.5, **kw})
        results = await send_alerts(None, ALERT, settings=s, sleep=waits)
    finally:
        await srv.stop()
    return results[0], waits


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_a_webhook_that_refuses_is_tried_once(status):
    """The hand-written loop tried a 401 (a revoked hook) three times; a 4xx is final."""
    rx = StatusReceiver([status] * 5)
    result, waits = await _webhook_with(rx)
    assert not result.ok and result.attempts == 1 and rx.tries == 1 and waits == []
    assert f"HTTP {status}" in result.error


async def test_a_webhook_retry_after_is_honoured():
    """The hand-written loop waited its own backoff, whatever the endpoint asked for."""
    rx = StatusReceiver([429, 503], retry_after="7")
    result, waits = await _webhook_with(rx)
    assert result.ok and result.attempts == 3 and waits == [7.0, 7.0]


async def test_a_webhook_down_for_good_stops_after_the_retries():
    rx = StatusReceiver([503] * 10)
    result, waits = await _webhook_with(rx, retries=4)
    assert not result.ok and result.attempts == 4 and rx.tries == 4 and len(waits) == 3
    assert all(0.5 * 2 ** n <= w <= 0.5 * 2 ** n + 0.5 for n, w in enumerate(waits))  # backoff plus jitter


async def test_telegram_flood_wait_is_honoured_and_a_bad_token_is_final():
    from harness.channels.telegram import BotApiEmulator

    token = "123456:alert-token"
    emu = BotApiEmulator(token, lambda e: None)
    emu.fail_next("sendMessage", 429, "Too Many Requests: retry after 5", retry_after=5)
    srv = await listen(emu.app(), "Bot API emulator")
    waits = Waits()
    try:
        s = _settings(telegram_chat_id="-100200300", telegram_token=token, telegram_api_base=srv.base_url,
                          backoff_s=0.5)
        flooded = await send_alerts(None, ALERT, settings=s, sleep=waits)
        wrong = _settings(telegram_chat_id="-100200300", telegram_token="999:wrong", telegram_api_base=srv.base_url,
                              backoff_s=0.5)
        refused = await send_alerts(None, ALERT, settings=wrong, sleep=waits)
    finally:
        await srv.stop()
    assert flooded[0].ok and flooded[0].attempts == 2 and waits == [5.0]  # parameters.retry_after, not the backoff
    assert not refused[0].ok and refused[0].attempts == 1 and waits == [5.0]  # 401/404: no second try


async def test_an_oci_client_error_is_final_a_server_error_is_retried():
    client = FakeOciClient(fail=True, status=400)
    s = _settings(oci_topic_id="t", oci_client=client, retries=3, backoff_s=0.5)
    result = (await send_alerts(None, ALERT, settings=s, sleep=Waits()))[0]
    assert not result.ok and result.attempts == 1 and client.calls == 1
    client = FakeOciClient(fail=True, status=503)
    s = _settings(oci_topic_id="t", oci_client=client, retries=3, backoff_s=0.5)
    result = (await send_alerts(None, ALERT, settings=s, sleep=Waits()))[0]
    assert not result.ok and result.attempts == 3 and client.calls == 3


async def test_a_hostile_bot_api_answer_is_a_failed_alert_never_a_crash_or_a_hang():
    """issue 24: the alert channel's answer was read whole and its error_code trusted: an endless
    body filled the memory, a string error_code crashed the alert step."""
    written = []

    async def endless(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(status=200)
        await resp.prepare(request)
        chunk = b"[" * 65536
        try:
            for _ in range(200):  # 13 MB of '[' (more than the cap); a real attacker would never stop
                await resp.write(chunk)
                written.append(len(chunk))
        except (ConnectionResetError, RuntimeError):  # the harness hung up once it had read its cap
            pass
        return resp

    async def odd(request: web.Request) -> web.Response:
        return web.json_response({"ok": False, "error_code": "soon", "description": "nope"})

    async def fine(request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "result": {"message_id": 1}})

    results = {}
    for name, handler in (("endless", endless), ("odd", odd), ("fine", fine)):
        app = web.Application()
        app.router.add_post("/bot{token}/sendMessage", handler)
        srv = await listen(app, f"bot api {name}")
        try:
            s = _settings(telegram_chat_id="-1", telegram_token="1:t", telegram_api_base=srv.base_url,
                          retries=1, backoff_s=0.01)
            results[name] = (await send_alerts(None, ALERT, settings=s, sleep=Waits()))[0]
        finally:
            await srv.stop()
    assert not results["endless"].ok and not results["odd"].ok
    assert sum(written) < 200 * 65536  # not read to its end: the reader stopped at its cap
    assert "HTTP 200" in results["odd"].error and "nope" in results["odd"].error
    assert results["fine"].ok  # the twin: a well-formed answer still sends
