"""The WhatsApp channel: webhook signing and delivery to the agent, plus re-exports.

Inbound (harness -> agent): ``WhatsAppUpdates`` builds the payloads, ``deliver_payload``
POSTs them signed like Meta does, ``verify_webhook`` performs the GET handshake.
Outbound (agent -> harness): ``GraphApiEmulator`` stands in for graph.facebook.com.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

import aiohttp

from harness.channels import read_capped
from harness.channels.whatsapp_emulator import GraphApiEmulator
from harness.channels.whatsapp_messages import graph_error, offered_options
from harness.channels.whatsapp_payloads import WhatsAppUpdates, new_media_id, new_wamid

__all__ = [
    "DeliveryResult",
    "GraphApiEmulator",
    "VerifyResult",
    "WhatsAppUpdates",
    "deliver_payload",
    "encode_payload",
    "graph_error",
    "offered_options",
    "new_media_id",
    "new_wamid",
    "sign",
    "verify_webhook",
]

SIGNATURE_HEADER = "X-Hub-Signature-256"
#: Meta's webhook user agent; some agents log or filter on it.
USER_AGENT = "facebookexternalua"
#: How much of the agent's answer body is kept (it is only evidence, not data).
MAX_BODY_CHARS = 2000


def sign(body: bytes, app_secret: str) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of the raw body bytes, keyed with the app secret."""
    digest = hmac.new(app_secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def encode_payload(payload: dict[str, Any]) -> bytes:
    """Serialize a payload the way it goes on the wire.

    Non-ASCII is \\u-escaped like Meta's own payloads, so an agent that verifies the
    signature over a re-serialized (decoded) body instead of the raw bytes fails here as
    it would in production. Deterministic: the same dict gives the same bytes, which is
    what makes a redelivery a true duplicate.
    """
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")


@dataclass(frozen=True)
class DeliveryResult:
    """How the agent's webhook answered one delivery."""

    status: int | None
    """HTTP status, or None when no answer came (connection refused, timeout)."""
    error: str = ""
    """Why there was no answer ('' when there was one, whatever its status)."""
    body: str = ""
    """The answer body (truncated)."""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of the GET verification handshake."""

    ok: bool
    """True when the webhook answered 200 with exactly the challenge as its body."""
    status: int | None
    body: str
    challenge: str
    error: str = ""


async def deliver_payload(
    session: aiohttp.ClientSession,
    url: str,
    payload: dict[str, Any],
    app_secret: str | None,
    timeout: float,
    *,
    signature: str | None = None,
) -> DeliveryResult:
    """POST ``payload`` to the agent's webhook, signed when ``app_secret`` is given.

    The body is serialized once and those exact bytes are both signed and sent: signing a
    second serialization could differ byte-wise and produce a false signature failure.
    ``signature`` sends that header value instead (a replayed, stale signature).
    Never raises for network trouble; the result says what happened.
    """
    body = encode_payload(payload)
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    if signature is not None:
        headers[SIGNATURE_HEADER] = signature
    elif app_secret is not None:
        headers[SIGNATURE_HEADER] = sign(body, app_secret)
    try:
        async with session.post(  # a redirect is not followed (Meta does not): the payload and its
            # signature go to the webhook only
            url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout), allow_redirects=False
        ) as resp:
            raw = await read_capped(resp, MAX_BODY_CHARS * 4)  # only its head is kept: never read it all
            return DeliveryResult(status=resp.status, body=raw.decode("utf-8", errors="replace")[:MAX_BODY_CHARS])
    except asyncio.TimeoutError:
        return DeliveryResult(status=None, error=f"no answer from {url} within {timeout:g}s")
    except aiohttp.ClientError as exc:
        return DeliveryResult(status=None, error=f"{type(exc).__name__}: {exc}")


async def verify_webhook(
    session: aiohttp.ClientSession,
    url: str,
    verify_token: str,
    timeout: float,
) -> VerifyResult:
    """Meta's subscription handshake: GET with ``hub.*`` params, expect the challenge back.

    The challenge is random per call, so an agent that answers a constant fails.
    """
    challenge = str(secrets.randbelow(9 * 10**9) + 10**9)  # Meta sends a decimal string
    params = {"hub.mode": "subscribe", "hub.verify_token": verify_token, "hub.challenge": challenge}
    try:
        async with session.get(
            url,
            allow_redirects=False,  # the verify token goes to the webhook only
            params=params,
            headers={"User-Agent": USER_AGENT},
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as resp:
            text = (await read_capped(resp, MAX_BODY_CHARS * 4)).decode("utf-8", errors="replace")
    except asyncio.TimeoutError:
        return VerifyResult(False, None, "", challenge, f"no answer from {url} within {timeout:g}s")
    except aiohttp.ClientError as exc:
        return VerifyResult(False, None, "", challenge, f"{type(exc).__name__}: {exc}")
    ok = resp.status == 200 and text == challenge
    error = "" if ok else f"expected 200 with body {challenge!r}, got {resp.status} with {text[:80]!r}"
    return VerifyResult(ok, resp.status, text[:MAX_BODY_CHARS], challenge, error)
