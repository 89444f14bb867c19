"""The sandbox's listening sockets bound ahead of its servers, and the ``{...}`` values they fill.

Standard library only (no aiohttp): ``harness run`` binds the five sockets right after the config
loads and starts the target with their addresses while the rest of the harness still imports
(``harness.run.early``); ``Sandbox.start(reserved)`` then serves each on its socket. A request the
target sends meanwhile (getMe, setWebhook) waits in the socket's backlog and is answered then.
"""

from __future__ import annotations

import socket
from typing import Any

from harness.sandbox.server import base_url, reserve

#: The sandbox's servers, in start order: key -> name in messages.
SERVERS = {
    "telegram": "Telegram Bot API emulator",
    "whatsapp": "WhatsApp Graph API emulator",
    "llm": "LLM gateway",
    "docs": "document server",
    "tools": "tool spy",
}


class Reserved:
    """One listening socket per sandbox server, until each server takes its own."""

    def __init__(self, sockets: dict[str, socket.socket]):
        self._sockets = sockets
        self._urls = {key: base_url(sock) for key, sock in sockets.items()}

    @classmethod
    def bind(cls) -> "Reserved":
        sockets: dict[str, socket.socket] = {}
        try:
            for key, name in SERVERS.items():
                sockets[key] = reserve(name)
        except BaseException:
            for sock in sockets.values():
                sock.close()
            raise
        return cls(sockets)

    def url(self, key: str) -> str:
        """``http://127.0.0.1:<port>`` of server ``key``."""
        return self._urls[key]

    def take(self, key: str) -> socket.socket | None:
        """Server ``key``'s socket, now owned by the caller (None once taken or closed)."""
        return self._sockets.pop(key, None)

    def close(self) -> None:
        """Close the sockets no server took (a run refused or failed before the sandbox started)."""
        while self._sockets:
            self._sockets.popitem()[1].close()


def placeholders(config: Any, *, telegram_api: str, whatsapp_api: str, llm_base_url: str, docs: str,
                 tools_url: str, anthropic_base_url: str = "", **extra: str) -> dict[str, str]:
    """Values for ``{...}`` in target env and case text (secrets included: never log these)."""
    sec, sb = config.secrets, config.sandbox
    values = {
        "telegram_api": telegram_api,
        "whatsapp_api": whatsapp_api,
        "llm_base_url": llm_base_url,
        # the gateway's root: an Anthropic SDK appends /v1/messages itself
        "anthropic_base_url": anthropic_base_url or llm_base_url.removesuffix("/v1"),
        "docs": docs,
        "tools_url": tools_url,
        "bot_token": sec.bot_token,
        "webhook_secret": sec.webhook_secret,
        "app_secret": sec.app_secret,
        "verify_token": sec.verify_token,
        "whatsapp_token": sec.whatsapp_token,
        "phone_number_id": sb.phone_number_id,
        "whatsapp_api_version": sb.whatsapp_api_version,
    }
    values.update(extra)
    return values


def reserved_placeholders(config: Any, reserved: Reserved, **extra: str) -> dict[str, str]:
    """``placeholders`` for a sandbox that will serve on ``reserved`` (the same values
    ``Sandbox.placeholders`` gives once it has started on those sockets)."""
    return placeholders(config, telegram_api=reserved.url("telegram"), whatsapp_api=reserved.url("whatsapp"),
                        llm_base_url=reserved.url("llm") + "/v1", anthropic_base_url=reserved.url("llm"),
                        docs=reserved.url("docs"),
                        tools_url=reserved.url("tools"), **extra)
