"""The two channels (Telegram, WhatsApp): each one's protocol, driver and emulator."""

from __future__ import annotations

from typing import Any


async def read_capped(resp: Any, cap: int) -> bytes:
    """At most ``cap + 1`` bytes of an aiohttp response's body (more than ``cap``: the answer was
    too long, and the rest is never read), so an agent answering without end cannot fill the
    harness's memory."""
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = await resp.content.read(min(65_536, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
