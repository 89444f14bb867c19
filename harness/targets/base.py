"""A target is the agent under test: something with webhooks the driver can POST to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Endpoints:
    """Where the running target listens."""

    telegram_webhook: str = ""
    whatsapp_webhook: str = ""
    state_url: str = ""
    version: str = ""
    """Agent version reported by the target (ready_url JSON or [target].version)."""


class Target(Protocol):
    async def start(self, placeholders: dict[str, str]) -> Endpoints: ...

    async def stop(self) -> None: ...

    def alive(self) -> bool: ...

    def log_tail(self, lines: int = 30) -> str: ...
