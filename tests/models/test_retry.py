"""The one retry policy (harness.models.retry): what is retried, how long it waits, when it stops.

Every wait goes through an injected sleep that records it; no test waits or reads a clock."""

from __future__ import annotations

import smtplib

import httpx
import pytest

from harness.models.retry import RetryPolicy, Transient, is_transient, retry_after_s

NOW = 1_700_000_000.0  # an injected clock: Tue, 14 Nov 2023 22:13:20 GMT


class Script:
    """A remote call that fails with each exception in turn, then answers "ok"."""

    def __init__(self, *failures: BaseException):
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"

    async def acall(self) -> str:
        return self()


class Status(Exception):
    """An SDK error carrying an HTTP status (like aiohttp's or OCI's)."""

    def __init__(self, status: int):
        super().__init__(f"HTTP {status}")
        self.status = status


def run(policy: RetryPolicy, script: Script):
    waits: list[float] = []
    try:
        return policy.call(script, sleep=waits.append), waits
    except Exception as exc:  # noqa: BLE001 - the test reads what came out
        return exc, waits


def test_retry_after_in_seconds_is_the_wait():
    result, waits = run(RetryPolicy(attempts=3, backoff_s=0.5), Script(Transient("HTTP 429", retry_after=7)))
    assert result == "ok" and waits == [7.0]


def test_retry_after_as_an_http_date_is_read_against_the_clock():
    assert retry_after_s("Tue, 14 Nov 2023 22:13:50 GMT", now=lambda: NOW) == 30.0
    assert retry_after_s("Tue, 14 Nov 2023 22:13:50 -0000", now=lambda: NOW) == 30.0  # no zone: UTC, not local
    assert retry_after_s("Tue, 14 Nov 2023 22:00:00 GMT", now=lambda: NOW) == 0.0  # already past
    assert retry_after_s("soon", now=lambda: NOW) is None and retry_after_s("", now=lambda: NOW) is None
    assert retry_after_s("inf") is None and retry_after_s("-3") == 0.0 and retry_after_s(2) == 2.0


def test_retry_after_is_capped():
    result, waits = run(RetryPolicy(attempts=2, backoff_s=0.5, max_wait_s=30), Script(Transient("429", 3600)))
    assert result == "ok" and waits == [30.0]


def test_without_retry_after_the_wait_is_exponential_with_jitter():
    result, waits = run(RetryPolicy(attempts=4, backoff_s=1.0, max_wait_s=100),
                        Script(Transient("503"), Transient("503"), Transient("503")))
    assert result == "ok" and len(waits) == 3
    for n, wait in enumerate(waits):  # 1, 2, 4 seconds, each plus up to 1 s of jitter
        assert 2 ** n <= wait <= 2 ** n + 1.0


def test_jitter_spreads_the_waits_of_callers_failing_together():
    firsts = {run(RetryPolicy(attempts=2, backoff_s=1.0), Script(Transient("503")))[1][0] for _ in range(20)}
    assert len(firsts) > 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_4xx_is_not_retried(status):
    script = Script(Status(status))
    result, waits = run(RetryPolicy(attempts=5, backoff_s=0.1), script)
    assert isinstance(result, Status) and script.calls == 1 and waits == []


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_429_and_5xx_are_retried(status):
    script = Script(Status(status))
    result, waits = run(RetryPolicy(attempts=5, backoff_s=0.1), script)
    assert result == "ok" and script.calls == 2 and len(waits) == 1


def test_the_stop_is_respected_and_the_last_failure_raised():
    script = Script(*(Transient(f"503 #{i}") for i in range(10)))
    result, waits = run(RetryPolicy(attempts=3, backoff_s=0.1), script)
    assert isinstance(result, Transient) and str(result) == "503 #2"
    assert script.calls == 3 and len(waits) == 2
    script = Script(Transient("503"))
    result, waits = run(RetryPolicy(attempts=1), script)
    assert isinstance(result, Transient) and script.calls == 1 and waits == []


async def test_the_async_form_has_the_same_behaviour():
    waits: list[float] = []

    async def sleep(s: float) -> None:
        waits.append(s)

    script = Script(Transient("429", retry_after=2), Status(503), Status(404))
    with pytest.raises(Status):
        await RetryPolicy(attempts=5, backoff_s=0.0).acall(script.acall, sleep=sleep)
    assert script.calls == 3 and waits == [2.0, 0.0]


def test_on_retry_sees_each_try_and_its_wait():
    seen = []
    RetryPolicy(attempts=3, backoff_s=0).call(Script(Transient("a", 1), Transient("b", 2)), sleep=lambda s: None,
                                              on_retry=lambda n, exc, wait: seen.append((n, str(exc), wait)))
    assert seen == [(1, "a", 1.0), (2, "b", 2.0)]


def _client_error(status: int, code: str, retry_after: str | None = None):
    from botocore.exceptions import ClientError

    headers = {"retry-after": retry_after} if retry_after else {}
    return ClientError({"Error": {"Code": code, "Message": code},
                        "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": headers}}, "PutObject")


def _botocore(name: str):
    from botocore import exceptions

    return getattr(exceptions, name)(endpoint_url="http://127.0.0.1:9")


@pytest.mark.parametrize("make,transient", [
    (lambda: ConnectionRefusedError(111, "refused"), True),
    (lambda: TimeoutError(), True),
    (lambda: httpx.ConnectError("refused"), True),
    (lambda: httpx.ReadTimeout("slow"), True),
    (lambda: httpx.UnsupportedProtocol("Request URL has an unsupported protocol 'ftp://'"), False),
    (lambda: smtplib.SMTPResponseException(421, b"try later"), True),
    (lambda: smtplib.SMTPAuthenticationError(535, b"bad password"), False),
    (lambda: smtplib.SMTPServerDisconnected("gone"), True),
    (lambda: _client_error(503, "ServiceUnavailable"), True),
    (lambda: _client_error(500, "InternalError"), True),
    (lambda: _client_error(400, "SlowDown"), True),
    (lambda: _client_error(403, "AccessDenied"), False),
    (lambda: _client_error(404, "NoSuchBucket"), False),
    (lambda: _botocore("EndpointConnectionError"), True),
    (lambda: _botocore("ConnectTimeoutError"), True),
    (lambda: ValueError("a bug"), False),
    (lambda: RuntimeError("no status"), False),
])
def test_what_is_transient(make, transient):
    assert is_transient(make()) is transient


def test_a_botocore_retry_after_header_is_honoured():
    from harness.models.retry import server_retry_after

    assert server_retry_after(_client_error(503, "SlowDown", "4")) == 4.0
    result, waits = run(RetryPolicy(attempts=2, backoff_s=0.1), Script(_client_error(503, "SlowDown", "4")))
    assert result == "ok" and waits == [4.0]
