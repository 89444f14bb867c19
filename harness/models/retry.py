"""One retry policy for every remote call: object storage, alerts, the LLM critic (tenacity).

A call is tried at most ``attempts`` times. Between two tries the wait is exponential with
jitter (tenacity's ``wait_exponential + wait_random``: ``backoff_s * 2**(n-1)`` plus up to
``backoff_s`` at random, so shards failing together do not retry together), or the server's
``Retry-After`` when it sent one (delta-seconds or an HTTP date); no wait is longer than
``max_wait_s``. Only transient failures are retried (``is_transient``): connection errors,
timeouts, HTTP 429 and 5xx. Anything else (a 4xx: bad credentials, a bad request, a wrong
URL scheme) fails on the first try, since asking again gets the same answer.

Callers translate their library's errors at the boundary into ``Transient`` (with the
server's ``retry_after``) or let ``is_transient`` read them: an exception may say for itself
(``.transient`` and ``.retry_after`` attributes), else its type or HTTP status decides.
Lives in ``harness.models`` because that is the lowest layer all its callers may import
(``night`` and ``models``); it imports nothing of the harness.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import smtplib
import sys
import time
from dataclasses import dataclass
from datetime import timezone
from typing import Any, Awaitable, Callable, TypeVar

import tenacity

log = logging.getLogger("harness.retry")
T = TypeVar("T")
#: Codes object stores and SDKs use for "slow down, try again" without a 429/5xx status.
THROTTLE_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout",
                            "RequestTimeoutException", "TooManyRequests", "TooManyRequestsException",
                            "ServiceUnavailable", "InternalError", "RequestLimitExceeded"})


class Transient(Exception):
    """A failure worth another try, with the server's ``Retry-After`` in seconds if it sent one."""

    transient = True

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def transient_status(status: int) -> bool:
    """HTTP statuses worth another try: 429 Too Many Requests and every 5xx."""
    return status == 429 or 500 <= status <= 599


def retry_after_s(value: Any, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or an HTTP date), else None.

    A date in the past is 0; a date without a zone is read as UTC (HTTP dates are GMT), never
    as the machine's local time; a value that is neither (or not finite) is None.
    """
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return max(0.0, float(value)) if math.isfinite(value) else None
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now())


def _status(exc: BaseException) -> int | None:
    """The HTTP status an SDK's error carries (aiohttp ``.status``, OCI ``.status``, httpx and
    botocore responses), or None."""
    for attr in ("status", "status_code"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    if isinstance(code, int):
        return code
    if isinstance(response, dict):  # botocore's ClientError
        code = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        if isinstance(code, int):
            return code
    return None


def is_transient(exc: BaseException) -> bool:
    """Is ``exc`` worth another try? (connection errors, timeouts, 429, 5xx; see the module doc)."""
    said = getattr(exc, "transient", None)
    if isinstance(said, bool):
        return said
    if isinstance(exc, (TimeoutError, ConnectionError)):  # includes asyncio's and socket's timeouts
        return True
    if isinstance(exc, (smtplib.SMTPServerDisconnected, smtplib.SMTPConnectError)):
        return True
    if isinstance(exc, smtplib.SMTPResponseException):  # 4yz is SMTP's "try again later"
        return 400 <= exc.smtp_code < 500
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return isinstance(exc, (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError))
    requests = sys.modules.get("requests.exceptions")  # the OCI SDK's transport
    if requests is not None and isinstance(exc, (requests.ConnectionError, requests.Timeout)):
        return True
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None and isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ServerTimeoutError)):
        return True
    botocore = sys.modules.get("botocore.exceptions")
    if botocore is not None:
        if isinstance(exc, (botocore.ConnectionError, botocore.HTTPClientError)):
            return True  # endpoint unreachable, connect/read timeout, connection closed
        if isinstance(exc, botocore.ClientError):
            code = str((exc.response.get("Error") or {}).get("Code", ""))
            if code in THROTTLE_CODES:
                return True
    status = _status(exc)
    return status is not None and transient_status(status)


def server_retry_after(exc: BaseException) -> float | None:
    """The wait the server asked for, as carried by the exception (``.retry_after``, or a
    botocore error's ``Retry-After`` header), in seconds."""
    value = getattr(exc, "retry_after", None)
    if value is not None:
        return retry_after_s(value)
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        headers = (response.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
        return retry_after_s(headers.get("retry-after"))
    return None


class wait_retry_after(tenacity.wait.wait_base):
    """The server's Retry-After when the failure carried one, else ``fallback``; capped at ``cap``."""

    def __init__(self, fallback: tenacity.wait.wait_base, cap: float):
        self.fallback = fallback
        self.cap = cap

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        asked = server_retry_after(exc) if exc is not None else None
        wait = asked if asked is not None else self.fallback(retry_state)
        return max(0.0, min(wait, self.cap))


#: ``on_retry(attempt, exc, wait_s)``: called before each wait (log, count, record).
OnRetry = Callable[[int, BaseException, float], None]


@dataclass(frozen=True)
class RetryPolicy:
    """How a remote call is retried. ``call`` for blocking calls, ``acall`` for coroutines."""

    attempts: int = 3
    """Tries in all (1: no retry)."""
    backoff_s: float = 1.0
    """The first wait (before the second try); doubled after each try, plus up to as much jitter."""
    max_wait_s: float = 30.0
    """The longest single wait, also when the server's Retry-After asks for more."""
    transient: Callable[[BaseException], bool] = is_transient
    """Which failures are retried."""

    def wait(self) -> wait_retry_after:
        backoff = max(0.0, self.backoff_s)
        jittered = tenacity.wait_exponential(multiplier=backoff, max=self.max_wait_s) + tenacity.wait_random(0, backoff)
        return wait_retry_after(jittered, cap=self.max_wait_s)

    def _kwargs(self, what: str, on_retry: OnRetry | None) -> dict[str, Any]:
        def before_sleep(state: tenacity.RetryCallState) -> None:
            exc = state.outcome.exception()
            wait = state.next_action.sleep if state.next_action else 0.0
            # the type only: the caller logs the message, through the redactor where it may hold a secret
            log.debug("%s failed (try %d of %d): %s; retrying in %.2fs", what, state.attempt_number,
                      self.attempts, type(exc).__name__, wait)
            if on_retry is not None:
                on_retry(state.attempt_number, exc, wait)

        return {"stop": tenacity.stop_after_attempt(max(1, self.attempts)), "wait": self.wait(),
                "retry": tenacity.retry_if_exception(self.transient), "reraise": True,
                "before_sleep": before_sleep}

    def call(self, fn: Callable[[], T], *, what: str = "call", sleep: Callable[[float], Any] = time.sleep,
             on_retry: OnRetry | None = None) -> T:
        """``fn()`` with retries; the last failure is raised as it was (also a non-transient one)."""
        return tenacity.Retrying(sleep=sleep, **self._kwargs(what, on_retry))(fn)

    async def acall(self, fn: Callable[[], Awaitable[T]], *, what: str = "call",
                    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, on_retry: OnRetry | None = None) -> T:
        """``await fn()`` with retries; the last failure is raised as it was."""
        return await tenacity.AsyncRetrying(sleep=sleep, **self._kwargs(what, on_retry))(fn)


__all__ = ("RetryPolicy", "Transient", "is_transient", "retry_after_s", "server_retry_after", "transient_status",
           "wait_retry_after")
