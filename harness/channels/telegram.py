"""The Telegram channel: webhook delivery to the agent, plus re-exports.

Inbound (harness -> agent): ``TelegramUpdates`` builds Updates, ``deliver_update`` POSTs
them like Telegram does. Outbound (agent -> harness): ``BotApiEmulator`` stands in for
api.telegram.org; ``webhook_reply_event`` records a method call the agent put in its
webhook answer instead (Telegram executes those too).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

from harness.channels import read_capped
from harness.channels.telegram_calls import ApiError, canonical_method, reply_buttons
from harness.channels.telegram_emulator import BotApiEmulator, webhook_reply_event
from harness.channels.telegram_methods import WebhookSettings
from harness.channels.telegram_entities import text_entities, utf16_len
from harness.channels.telegram_updates import DEFAULT_BOT_USER, MessageIds, TelegramUpdates, callback_chat

__all__ = [
    "DEFAULT_BOT_USER",
    "ApiError",
    "BotApiEmulator",
    "DeliveryResult",
    "MessageIds",
    "SECRET_HEADER",
    "TelegramUpdates",
    "WebhookSettings",
    "callback_chat",
    "canonical_method",
    "deliver_update",
    "reply_buttons",
    "text_entities",
    "utf16_len",
    "webhook_reply_event",
]

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
#: How much of the agent's answer body is kept (it is evidence, not data).
MAX_BODY_CHARS = 4000
#: The most of a webhook's answer read (bytes): a method call in it is a few kB at most.
MAX_ANSWER_BYTES = 4_000_000


@dataclass(frozen=True)
class DeliveryResult:
    """How the agent's webhook answered one delivered Update."""

    status: int | None
    """HTTP status, or None when no answer came (connection refused, timeout)."""
    error: str = ""
    """Why there was no answer ('' when there was one, whatever its status)."""
    body: str = ""
    """The answer body (truncated)."""
    webhook_reply: dict[str, Any] | None = None
    """A Bot API call the agent made in its answer (``{"method": ...}``), if any."""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def _webhook_call(status: int, text: str) -> dict[str, Any] | None:
    """The ``{"method": ...}`` object of a 2xx answer body (Telegram ignores it otherwise)."""
    if not 200 <= status < 300 or '"method"' not in text:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # nested past the parser: not a method call
        return None
    if isinstance(data, dict) and isinstance(data.get("method"), str) and data["method"]:
        return data
    return None


async def deliver_update(
    session: aiohttp.ClientSession,
    url: str,
    update: dict[str, Any],
    secret_token: str | None,
    timeout: float,
) -> DeliveryResult:
    """POST ``update`` to the agent's webhook as Telegram does; never raises for network trouble.

    ``Content-Type`` is exactly ``application/json`` (no charset): python-telegram-bot
    answers 403 to anything else, so sending it differently would fail agents falsely.
    """
    body = json.dumps(update, ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if secret_token:
        headers[SECRET_HEADER] = secret_token
    try:
        async with session.post(  # a redirect is not followed, as Telegram does not: the update (and
            # its secret token) go to the webhook only, never to wherever the bot points
            url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout), allow_redirects=False
        ) as resp:
            raw = await read_capped(resp, MAX_ANSWER_BYTES)  # an endless answer never fills the memory
    except asyncio.TimeoutError:
        return DeliveryResult(status=None, error=f"no answer from {url} within {timeout:g}s")
    except aiohttp.ClientError as exc:
        return DeliveryResult(status=None, error=f"{type(exc).__name__}: {exc}")
    text = raw[:MAX_ANSWER_BYTES].decode("utf-8", errors="replace")
    if len(raw) > MAX_ANSWER_BYTES:
        return DeliveryResult(status=resp.status, body=text[:MAX_BODY_CHARS],
                              error=f"the webhook's answer is over {MAX_ANSWER_BYTES // 1_000_000} MB; it was not "
                                    "read further nor taken as a method call")
    return DeliveryResult(
        status=resp.status,
        body=text[:MAX_BODY_CHARS],
        # parsed from the whole body: a long reply text must not be cut off first
        webhook_reply=_webhook_call(resp.status, text),
    )
